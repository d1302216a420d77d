/** Text for an activity label in curly quotes, cut to 40 characters: “Vendor pricing”. */
export function quoteForLabel(text: string): string {
  const characters = Array.from(text.replaceAll(/\s+/g, ' ').trim());
  return `“${characters.length <= 40 ? characters.join('') : `${characters.slice(0, 39).join('')}…`}”`;
}

/** `1 page`, `3 pages`. */
export function countPages(count: number): string {
  return `${count} page${count === 1 ? '' : 's'}`;
}
