import type { Logger } from 'pino';
import type { JsonObject } from '../../../json.js';
import type { FetchOutcome } from './fetch-page.js';
import type { FetchedPage } from './fetched-page.js';
import { fitToBudget } from './fit-to-budget.js';
import { formatBytes } from '../../../format/format-bytes.js';
import type { HomeOwner } from '../../computer/home-fs/open-home-path.js';
import { saveOverflowText } from './save-overflow-text.js';

export interface PresentedOutcome {
  /** The section of the tool output for this URL. */
  readonly text: string;
  readonly details: JsonObject;
}

/**
 * Writes one URL's part of the output: a short header (title, final URL, type, size, cache),
 * then the text within `budget` characters (its share of `outputChars`). A longer text is saved whole under `.web/` in
 * the agent home and the section says where, and from which line `read_file` continues.
 */
export async function presentOutcome(options: {
  readonly outcome: FetchOutcome;
  readonly position: number;
  readonly total: number;
  readonly budget: number;
  readonly home: string;
  /** Who the saved file and `.web` belong to (the sandbox user when the service is root). */
  readonly owner?: HomeOwner | undefined;
  readonly signal: AbortSignal;
  readonly logger: Logger;
}): Promise<PresentedOutcome> {
  const { outcome } = options;
  const heading = options.total > 1 ? `[${options.position}/${options.total}] ${outcome.url}` : outcome.url;
  if (!outcome.ok) {
    return {
      text: `${heading}\nFailed: ${outcome.message}`,
      details: { url: outcome.url, ok: false, failure: outcome.failure, error: outcome.message },
    };
  }
  const { page } = outcome;
  const header = [heading];
  if (page.title !== undefined) header.push(`Title: ${page.title}`);
  if (page.url !== outcome.url) header.push(`Final URL: ${page.url}`);
  header.push(`Content: ${page.mediaType}, ${formatBytes(page.bytes)}${outcome.cached ? `, from the cache (fetched ${formatAge(outcome.ageMs)} ago)` : ''}`);
  if (page.truncated) header.push(`Note: the response was cut at ${formatBytes(page.bytes)}, the size limit; the text below is incomplete.`);

  const fitted = fitToBudget(page.text, options.budget);
  const details: JsonObject = {
    url: outcome.url,
    ok: true,
    finalUrl: page.url,
    status: page.status,
    mediaType: page.mediaType,
    kind: page.kind,
    bytes: page.bytes,
    cached: outcome.cached,
    truncated: page.truncated,
    characters: page.text.length,
    shownCharacters: fitted.shown.length,
  };
  if (fitted.complete) return { text: `${header.join('\n')}\n\n${page.text}`, details };

  const shownNote = `Shown: the first ${fitted.shown.length} of ${page.text.length} characters.`;
  let note: string;
  try {
    const saved = await saveOverflowText({ home: options.home, url: page.url, text: page.text, extension: extensionFor(page), owner: options.owner, signal: options.signal });
    details['savedTo'] = saved;
    note = `[${shownNote} The full text is saved in the agent home as ${saved}. To read the rest, call read_file with path "${saved}" and offset ${fitted.nextLine} (the first line not shown here; character ${fitted.nextCharacter}).]`;
  } catch (error) {
    options.logger.warn({ url: page.url, err: error }, 'web_fetch could not save the full text');
    note = `[${shownNote} The rest could not be saved in the agent home (${error instanceof Error ? error.message : String(error)}).]`;
  }
  return { text: `${header.join('\n')}\n\n${fitted.shown.trimEnd()}\n\n${note}`, details };
}

function extensionFor(page: FetchedPage): 'md' | 'json' | 'txt' {
  if (page.kind === 'json') return 'json';
  if (page.kind === 'html') return 'md';
  return 'txt';
}

function formatAge(ageMs: number): string {
  const seconds = Math.max(0, Math.round(ageMs / 1000));
  if (seconds < 60) return `${seconds} s`;
  return `${Math.round(seconds / 60)} min`;
}
