import type { SearchResult } from './search-provider.js';

/**
 * The model's view of a search: a numbered list, best first, each entry its title, URL,
 * date when known and snippet on lines of their own. Every field is already one line of
 * plain text, so no snippet can fake an entry or a heading.
 */
export function formatSearchResults(options: { query: string; results: readonly SearchResult[] }): string {
  const { query, results } = options;
  if (results.length === 0) return `No results for '${query}'. Try fewer or different keywords.`;
  const entries = results.map((result, index) => {
    const lines = [`${String(index + 1)}. ${result.title}`, `   ${result.url}`];
    if (result.publishedAt !== undefined) lines.push(`   Published: ${result.publishedAt}`);
    if (result.snippet !== '') lines.push(`   ${result.snippet}`);
    return lines.join('\n');
  });
  const noun = results.length === 1 ? 'result' : 'results';
  return `${String(results.length)} ${noun} for '${query}':\n\n${entries.join('\n\n')}`;
}
