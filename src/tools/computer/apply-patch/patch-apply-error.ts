/**
 * A well-formed patch that cannot be applied: a hunk that does not match, a file that is
 * missing or already there, a path outside the home, a write that failed. The message names
 * the file (as the model wrote it) and, for a hunk, its number and first lines.
 */
export class PatchApplyError extends Error {
  /** The file the failure is about, relative to the agent home. */
  readonly path: string | undefined;

  constructor(options: { message: string; path?: string }) {
    super(options.message);
    this.name = 'PatchApplyError';
    this.path = options.path;
  }
}
