import { z } from 'zod';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { AgentToolResult } from '../tool-result.js';
import type { DeferredToolSet } from './deferred-tool-set.js';
import { resolveToolPaths } from './resolve-tool-paths.js';
import { toolFacts } from './tool-facts.js';
import { describeToolSearch, describeToolSearchResult } from './tool-search-labels.js';

export const TOOL_SEARCH_NAME = 'tool_search';
/** The most tools one search may load: more would defeat the point of deferring them. */
export const MAX_TOOLS_PER_SEARCH = 50;
const DEFAULT_QUERY_RESULTS = 8;
const MAX_LISTED_NAMESPACES = 20;
const MAX_SUGGESTIONS = 3;

const toolSearchSchema = z
  .strictObject({
    query: z
      .string()
      .max(500)
      .optional()
      .describe('Keywords for what you need to do, in any language: "create calendar event", "发票". Loads the best matches.'),
    paths: z
      .array(z.string().min(1).max(200))
      .max(MAX_TOOLS_PER_SEARCH)
      .optional()
      .describe('Exact paths to load: a namespace ("calendar") loads its tools; "calendar.create_event" loads one tool.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_TOOLS_PER_SEARCH)
      .optional()
      .describe(`How many query matches to load (default ${DEFAULT_QUERY_RESULTS}).`),
  })
  .refine((params) => (params.query !== undefined && params.query.trim() !== '') || (params.paths !== undefined && params.paths.length > 0), {
    message: 'give a query, or paths to load',
  });

export type ToolSearchParams = z.output<typeof toolSearchSchema>;

/** What the search needs from the turn's catalog. */
export interface ToolSearchHost {
  readonly set: DeferredToolSet;
  /** The tool a name or identity stands for in this turn (deferred or shown), if any. */
  lookupName(name: string): WorkerAgentTool | undefined;
  /** The name the model calls the tool by. */
  providerName(tool: WorkerAgentTool): string;
  isLoaded(tool: WorkerAgentTool): boolean;
  /** Makes the tools callable, and shown from the next model call on. */
  load(tools: readonly WorkerAgentTool[]): void;
}

/**
 * The synthesized `tool_search` function of emulated mode: it lists what can be searched,
 * takes a query (ranked with BM25) or exact paths (unknown ones fail closed: nothing loads),
 * and loads at most 50 tools per call into the turn's catalog.
 */
export function createToolSearchTool(options: { readonly host: ToolSearchHost }): WorkerAgentTool<ToolSearchParams> {
  const { host } = options;
  return defineWorkerTool<ToolSearchParams>({
    name: TOOL_SEARCH_NAME,
    description: [
      'Find and load tools that are not shown yet. Their schemas stay hidden until loaded; a loaded tool can be called from your next step on.',
      `Give \`query\` (keywords, any language) to load the best matches, or \`paths\` to load exactly those. At most ${MAX_TOOLS_PER_SEARCH} tools load per call.`,
      'Searchable (paths are a namespace, "namespace.tool", or a tool name):',
      host.set.listing,
    ].join('\n'),
    schema: toolSearchSchema,
    // Loading is synchronous and idempotent, and it touches nothing outside this turn.
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => describeToolSearch(params),
    describeCompletedActivity: (params, result) => {
      const loaded = result.details?.['loadedNames'];
      const already = result.details?.['alreadyLoaded'];
      return describeToolSearchResult({
        loaded: Array.isArray(loaded) ? loaded.filter((name): name is string => typeof name === 'string') : [],
        alreadyLoaded: Array.isArray(already) ? already.length : 0,
        query: params.query,
      });
    },
    execute: (params) => Promise.resolve(runToolSearch(host, params)),
  });
}

function runToolSearch(host: ToolSearchHost, params: ToolSearchParams): AgentToolResult {
  const query = params.query?.trim() ?? '';
  const candidates: WorkerAgentTool[] = [];
  let alreadyShown: readonly string[] = [];
  if (params.paths !== undefined && params.paths.length > 0) {
    const resolved = resolveToolPaths({ paths: params.paths, set: host.set, lookupName: (name) => host.lookupName(name) });
    if (resolved.unknown.length > 0) throw new Error(unknownPathsMessage(host, resolved.unknown));
    candidates.push(...resolved.tools);
    alreadyShown = resolved.alreadyShown;
  }
  if (query !== '') {
    const found = host.set.search(query, params.limit ?? DEFAULT_QUERY_RESULTS);
    for (const tool of found) if (!candidates.includes(tool)) candidates.push(tool);
  }
  const alreadyLoaded = candidates.filter((tool) => host.isLoaded(tool));
  const fresh = candidates.filter((tool) => !host.isLoaded(tool));
  const loaded = fresh.slice(0, MAX_TOOLS_PER_SEARCH);
  const left = fresh.slice(MAX_TOOLS_PER_SEARCH);
  host.load(loaded);

  const lines: string[] = [];
  if (loaded.length > 0) {
    lines.push(`Loaded ${loaded.length === 1 ? '1 tool' : `${loaded.length} tools`}${query === '' ? '' : ` for "${query}"`}; call them from your next step on:`);
    for (const tool of loaded) lines.push(`- ${host.providerName(tool)}: ${toolFacts(tool).shortDescription}`);
  }
  const ready = [...alreadyLoaded.map((tool) => host.providerName(tool)), ...alreadyShown];
  if (ready.length > 0) lines.push(`Already available, no need to load: ${ready.join(', ')}.`);
  if (left.length > 0) {
    const example = toolFacts(left[0] as WorkerAgentTool).identity;
    lines.push(
      `Not loaded: ${left.length} more ${left.length === 1 ? 'tool' : 'tools'} (at most ${MAX_TOOLS_PER_SEARCH} load per search). Load the ones you need by path (such as "${example}") or with a narrower query.`,
    );
  }
  if (candidates.length === 0 && alreadyShown.length === 0) {
    lines.push(`No tools matched "${query}". Try other words, or load by path. ${namespacesHint(host)}`);
  }
  return {
    content: lines.join('\n'),
    details: {
      ...(query === '' ? {} : { query }),
      ...(params.paths === undefined ? {} : { paths: params.paths }),
      loaded: loaded.map((tool) => toolFacts(tool).identity),
      loadedNames: loaded.map((tool) => tool.name),
      alreadyLoaded: alreadyLoaded.map((tool) => toolFacts(tool).identity),
      notLoaded: left.length,
    },
  };
}

function unknownPathsMessage(host: ToolSearchHost, unknown: readonly string[]): string {
  const quoted = unknown.slice(0, 10).map((path) => `"${path.slice(0, 100)}"`).join(', ');
  const suggestions = host.set.search(unknown.join(' '), MAX_SUGGESTIONS).map((tool) => toolFacts(tool).identity);
  const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
  return (
    `unknown tool ${unknown.length === 1 ? 'path' : 'paths'} ${quoted}; nothing was loaded. ` +
    `A path is a namespace ("calendar"), a namespace and tool ("calendar.create_event"), or a tool name.${hint} ${namespacesHint(host)}`
  );
}

function namespacesHint(host: ToolSearchHost): string {
  const names = [...host.set.namespaces.keys()];
  if (names.length === 0) return '';
  const shown = names.slice(0, MAX_LISTED_NAMESPACES).join(', ');
  return `Searchable namespaces: ${shown}${names.length > MAX_LISTED_NAMESPACES ? ', …' : ''}.`;
}
