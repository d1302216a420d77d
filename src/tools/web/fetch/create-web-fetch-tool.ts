import { z } from 'zod';
import type { Clock } from '../../../clock.js';
import type { JsonObject } from '../../../json.js';
import type { HostLookup } from '../../../net/guarded-lookup.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../define-worker-tool.js';
import { allocateBudgets } from './allocate-budgets.js';
import { fetchPage, type FetchOutcome } from './fetch-page.js';
import { runWithLimit } from '../../../concurrency/run-with-limit.js';
import type { HomeOwner } from '../../computer/home-fs/open-home-path.js';
import { presentOutcome } from './present-outcome.js';
import type { WebFetchCache } from './web-fetch-cache.js';
import { describeCompletedWebFetch, describeWebFetch } from './web-fetch-labels.js';
import type { WebFetchSettings } from './web-fetch-settings.js';

/** URLs fetched at once within one call; the rest wait for a free slot. */
const FETCH_CONCURRENCY = 3;

const webFetchSchema = z.object({
  urls: z
    .array(z.url({ protocol: /^https?$/ }).max(2048))
    .min(1)
    .max(5)
    .describe('1 to 5 http(s) URLs; each is fetched independently, so one failure does not stop the others'),
});

export type WebFetchParams = z.infer<typeof webFetchSchema>;

export interface CreateWebFetchToolOptions {
  readonly agentId: string;
  /** The agent home; full texts too long for the output are saved under `.web/` there. */
  readonly home: string;
  /** Who saved texts belong to (the sandbox user when the service is root); undefined: the service's user. */
  readonly owner?: HomeOwner | undefined;
  readonly settings: WebFetchSettings;
  /** This agent's cache, kept by the caller across turns. */
  readonly cache: WebFetchCache;
  /** Host name resolution; the system resolver unless a test injects one. */
  readonly lookup?: HostLookup;
  readonly clock: Clock;
}

/**
 * `web_fetch`: reads up to five public web pages as text. HTML comes back as readable
 * Markdown, JSON indented, text as is; other types are described. Every connection goes
 * through `guardedGet`, so neither the URL nor a redirect nor DNS can point it at the
 * service's own network.
 */
export function createWebFetchTool(options: CreateWebFetchToolOptions): WorkerAgentTool<WebFetchParams> {
  const { settings } = options;
  return defineWorkerTool<WebFetchParams>({
    name: 'web_fetch',
    description:
      'Fetch 1–5 web pages (http/https) and read them as text: HTML is returned as readable Markdown with its title, ' +
      'JSON pretty-printed, plain text as is; other content types are only described. Pages longer than the output ' +
      'allows are shown in part and saved whole under .web/ in your home, to continue with read_file. ' +
      'A URL fetched in the last 15 minutes is answered from a cache. Only public internet addresses can be reached.',
    schema: webFetchSchema,
    // Parallel, deliberately: fetching changes nothing anyone relies on. The one write — a
    // long page's full text under `.web/` — goes to a name fixed by URL and content, through
    // a private temp file and an atomic rename, and never replaces an existing file, so
    // concurrent calls (even of the same URL) and concurrent readers stay consistent.
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => describeWebFetch(params.urls),
    describeCompletedActivity: (params, result) => describeCompletedWebFetch(params.urls, result),
    async execute(params, context) {
      const { urls } = params;
      // The same URL twice in one call is fetched once.
      const inFlight = new Map<string, Promise<FetchOutcome>>();
      const outcomes = await runWithLimit({
        items: urls,
        limit: FETCH_CONCURRENCY,
        task: (url) => {
          const pending =
            inFlight.get(url) ??
            fetchPage({ url, settings, cache: options.cache, clock: options.clock, signal: context.signal, logger: context.logger, lookup: options.lookup });
          inFlight.set(url, pending);
          return pending;
        },
      });
      if (context.signal.aborted) throw new Error('web_fetch was cancelled');
      if (outcomes.every((outcome) => !outcome.ok)) throw new Error(allFailedMessage(outcomes));

      const budgets = allocateBudgets(
        outcomes.map((outcome) => (outcome.ok ? outcome.page.text.length : 0)),
        settings.outputChars,
      );
      const sections = [];
      for (const [index, outcome] of outcomes.entries()) {
        const budget = budgets[index] ?? 0;
        sections.push(await presentOutcome({ outcome, position: index + 1, total: urls.length, budget, home: options.home, owner: options.owner, signal: context.signal, logger: context.logger }));
      }
      const failed = outcomes.filter((outcome) => !outcome.ok).length;
      const details: JsonObject = {
        agentId: options.agentId,
        pages: sections.map((section) => section.details),
        fetched: outcomes.length - failed,
        failed,
        cached: outcomes.filter((outcome) => outcome.ok && outcome.cached).length,
      };
      return { content: sections.map((section) => section.text).join('\n\n======\n\n'), details };
    },
  });
}

function allFailedMessage(outcomes: readonly FetchOutcome[]): string {
  const reasons = outcomes.map((outcome) => `- ${outcome.url}: ${outcome.ok ? 'fetched' : outcome.message}`);
  const [only] = outcomes;
  if (outcomes.length === 1 && only !== undefined && !only.ok) return `Could not fetch ${only.url}: ${only.message}`;
  return `Could not fetch any of the ${outcomes.length} URLs:\n${reasons.join('\n')}`;
}
