/** A word for `/bin/sh`: left bare when it holds only safe characters, single-quoted otherwise. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
