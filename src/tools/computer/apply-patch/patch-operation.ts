/** One line of an update hunk: kept as context, removed, or added. */
export interface HunkLine {
  readonly kind: 'context' | 'remove' | 'add';
  /** The line's text without its prefix character and without a line ending. */
  readonly text: string;
}

/** One `@@` section of an `*** Update File` operation. */
export interface Hunk {
  /** The 1-based patch line the hunk starts on, for error messages. */
  readonly line: number;
  /**
   * The texts after `@@ `, outermost first ("class Foo", then "def bar():"). Each narrows the
   * search: the hunk's lines are looked for after the line that matches the last header.
   */
  readonly headers: readonly string[];
  readonly lines: readonly HunkLine[];
  /** Set by `*** End of File`: the hunk's old lines must be the last lines of the file. */
  readonly endOfFile: boolean;
}

export type PatchOperation =
  | {
      readonly kind: 'add';
      readonly line: number;
      readonly path: string;
      /** The new file's lines, without line endings. */
      readonly lines: readonly string[];
    }
  | { readonly kind: 'delete'; readonly line: number; readonly path: string }
  | {
      readonly kind: 'update';
      readonly line: number;
      readonly path: string;
      /** The new path from `*** Move to:`, when the file is renamed too. */
      readonly moveTo?: string;
      readonly hunks: readonly Hunk[];
    };

/** A parsed `*** Begin Patch … *** End Patch` envelope. */
export interface ParsedPatch {
  readonly operations: readonly PatchOperation[];
}
