/** Labels a person reads while Tool Search runs, the same in emulated and native mode. */

const MAX_QUERY_IN_LABEL = 60;
const MAX_NAMES_IN_LABEL = 5;

/** "Searching tools for 'calendar'", or "Loading tools: calendar, crm.list_orders". */
export function describeToolSearch(options: SearchRequest): string {
  return describe(options, { query: 'Searching tools for', paths: 'Loading tools:', plain: 'Searching tools' });
}

/** The finished label when the provider said nothing of what it loaded: "Searched tools for 'calendar'". */
export function describeFinishedToolSearch(options: SearchRequest): string {
  return describe(options, { query: 'Searched tools for', paths: 'Looked up tools:', plain: 'Searched tools' });
}

interface SearchRequest {
  readonly query?: string | undefined;
  readonly paths?: readonly string[] | undefined;
}

function describe(options: SearchRequest, words: { readonly query: string; readonly paths: string; readonly plain: string }): string {
  const query = options.query?.trim();
  if (query !== undefined && query !== '') return `${words.query} '${clip(query, MAX_QUERY_IN_LABEL)}'`;
  const paths = options.paths ?? [];
  if (paths.length > 0) return `${words.paths} ${listNames(paths)}`;
  return words.plain;
}

/** "Loaded 3 tools: create_event, list_events, delete_event", or why nothing was loaded. */
export function describeToolSearchResult(options: {
  readonly loaded: readonly string[];
  readonly alreadyLoaded?: number;
  readonly query?: string | undefined;
}): string {
  const { loaded } = options;
  if (loaded.length > 0) return `Loaded ${loaded.length === 1 ? '1 tool' : `${loaded.length} tools`}: ${listNames(loaded)}`;
  if ((options.alreadyLoaded ?? 0) > 0) return 'The tools found were already loaded';
  const query = options.query?.trim();
  return query === undefined || query === '' ? 'No tools loaded' : `No tools matched '${clip(query, MAX_QUERY_IN_LABEL)}'`;
}

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, MAX_NAMES_IN_LABEL).join(', ');
  return names.length > MAX_NAMES_IN_LABEL ? `${shown} and ${names.length - MAX_NAMES_IN_LABEL} more` : shown;
}

function clip(text: string, length: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}
