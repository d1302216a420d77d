/**
 * A patch the parser cannot read: the message names the patch line (1-based, counted in the
 * text exactly as the model sent it) and what was expected there, so the model can fix it.
 */
export class PatchError extends Error {
  /** The 1-based line of the patch text, when the fault is on one line. */
  readonly line: number | undefined;

  constructor(options: { message: string; line?: number }) {
    super(options.line === undefined ? `invalid patch: ${options.message}` : `invalid patch, line ${options.line}: ${options.message}`);
    this.name = 'PatchError';
    this.line = options.line;
  }
}
