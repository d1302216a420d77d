export interface FittedText {
  readonly shown: string;
  readonly complete: boolean;
  /** 1-based line where the unshown rest starts. */
  readonly nextLine: number;
  /** 0-based character offset where the unshown rest starts. */
  readonly nextCharacter: number;
}

/**
 * The longest start of `text` that fits `budget` characters, ending at a line break when
 * one is reasonably near, so "continue from line N" means exactly the rest.
 */
export function fitToBudget(text: string, budget: number): FittedText {
  if (text.length <= budget) return { shown: text, complete: true, nextLine: 0, nextCharacter: text.length };
  let cut = Math.max(1, budget);
  const lineEnd = text.lastIndexOf('\n', cut - 1);
  if (lineEnd >= cut / 2) cut = lineEnd + 1;
  else if (isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
  const shown = text.slice(0, cut);
  let lines = 0;
  for (let index = shown.indexOf('\n'); index !== -1; index = shown.indexOf('\n', index + 1)) lines += 1;
  return { shown, complete: false, nextLine: lines + 1, nextCharacter: cut };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
