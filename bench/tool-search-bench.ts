import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { JsonObject } from '../src/json.js';
import { defineWorkerTool, type WorkerAgentTool } from '../src/tools/define-worker-tool.js';
import { createTurnToolCatalog, type ToolSearchMode } from '../src/turns/create-turn-tool-catalog.js';

const DEFERRED_TOOLS = 2_000;
const TOOLS_PER_NAMESPACE = 10;
const TURNS = 300;
const SEARCHES = 2_000;

const VERBS = ['create', 'list', 'get', 'update', 'delete', 'search', 'export', 'import', 'archive', 'share'];
const NOUNS = [
  'event', 'invoice', 'customer', 'order', 'ticket', 'contact', 'file', 'folder', 'message', 'channel',
  'report', 'dashboard', 'task', 'project', 'issue', 'deployment', 'secret', 'user', 'group', 'webhook',
];
const CJK_NOUNS = ['日程', '发票', '客户', '订单', '工单', '联系人', '文件', '文件夹', '消息', '频道'];

/**
 * 2,000 deferred tools in 200 namespaces, as an MCP source would give them. Tools with the
 * same verb and noun share a schema object, so that defining them (schema compilation, a
 * one-time cost outside what is measured) takes a second, not ten.
 */
function deferredTools(): WorkerAgentTool[] {
  const tools: WorkerAgentTool[] = [];
  const schemas = new Map<string, JsonObject>();
  for (let index = 0; index < DEFERRED_TOOLS; index += 1) {
    const namespaceIndex = Math.floor(index / TOOLS_PER_NAMESPACE);
    const noun = NOUNS[namespaceIndex % NOUNS.length] ?? 'thing';
    const verb = VERBS[index % VERBS.length] ?? 'get';
    const cjk = CJK_NOUNS[namespaceIndex % CJK_NOUNS.length] ?? '';
    const key = `${verb}_${noun}`;
    const parameters = schemas.get(key) ?? {
      type: 'object',
      properties: {
        [`${noun}_id`]: { type: 'string', description: `The ${noun} id.` },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        [`${verb}_options`]: { type: 'object', properties: { dry_run: { type: 'boolean' } } },
      },
      required: [`${noun}_id`],
      additionalProperties: false,
    };
    schemas.set(key, parameters);
    tools.push(
      defineWorkerTool({
        name: `${verb}_${noun}_${index}`,
        description: `${verb[0]?.toUpperCase() ?? ''}${verb.slice(1)} a ${noun} in service ${namespaceIndex}. Returns the ${noun} with its fields. 管理${cjk}。`,
        jsonSchema: parameters,
        namespace: `svc${namespaceIndex}_${noun}`,
        namespaceDescription: `Service ${namespaceIndex}: ${noun} management (${cjk}).`,
        deferLoading: true,
        executionMode: 'sequential',
        isReadOnly: false,
        isDestructive: false,
        describeActivity: () => `${verb} ${noun}`,
        execute: () => Promise.resolve({ content: 'ok' }),
      }),
    );
  }
  return tools;
}

/** The built-in tools, which are new objects every turn (they close over the turn). */
function perTurnTools(): WorkerAgentTool[] {
  return ['read_file', 'write_file', 'list_files', 'run_command', 'todo'].map((name) =>
    defineWorkerTool({
      name,
      description: `The ${name} tool.`,
      jsonSchema: SHARED_SCHEMA,
      executionMode: 'sequential',
      isReadOnly: false,
      isDestructive: false,
      describeActivity: () => name,
      execute: () => Promise.resolve({ content: 'ok' }),
    }),
  );
}
const SHARED_SCHEMA: JsonObject = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false };

function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? 0;
}

function figures(samples: number[]): string {
  // `max` includes garbage-collection pauses of the process, whoever caused them.
  return `median ${percentile(samples, 0.5).toFixed(3)} ms, p95 ${percentile(samples, 0.95).toFixed(3)} ms, p99 ${percentile(samples, 0.99).toFixed(3)} ms, max ${Math.max(...samples).toFixed(3)} ms`;
}

const context = {
  signal: new AbortController().signal,
  callId: 'bench',
  logger: pino({ level: 'silent' }),
  present: () => undefined, reportStopped: () => undefined,
};

/** Prints catalog creation and search times for a catalog of 2,000 deferred tools. */
export async function runToolSearchBench(): Promise<void> {
  const setupStarted = performance.now();
  const deferred = deferredTools();
  console.log(`tool-search bench: ${deferred.length} deferred tools defined in ${(performance.now() - setupStarted).toFixed(0)} ms (one-time, schema compilation)`);

  for (const mode of ['emulated', 'native'] as const satisfies readonly ToolSearchMode[]) {
    const coldStarted = performance.now();
    createTurnToolCatalog({ tools: [...perTurnTools(), ...deferred], toolSearchMode: mode }).providerTools();
    const cold = performance.now() - coldStarted;
    const samples: number[] = [];
    for (let turn = 0; turn < TURNS; turn += 1) {
      const tools = [...perTurnTools(), ...deferred];
      const started = performance.now();
      const catalog = createTurnToolCatalog({ tools, toolSearchMode: mode });
      catalog.providerTools();
      catalog.callable();
      samples.push(performance.now() - started);
    }
    console.log(`  catalog creation (${mode}, ${TURNS} turns): first ${cold.toFixed(3)} ms; then ${figures(samples)}`);
  }

  const queries = ['calendar event', 'create invoice', 'delete customer order', 'export report dashboard', 'webhook secret', '发票', '客户订单', 'list_files', 'share folder with group', 'zzz nothing'];
  const firstTurn = createTurnToolCatalog({ tools: [...perTurnTools(), ...deferred], toolSearchMode: 'emulated' });
  const searchTool = firstTurn.callable().get('tool_search');
  if (searchTool === undefined) throw new Error('no tool_search in an emulated catalog with deferred tools');
  const search = async (query: string): Promise<number> => {
    const checked = searchTool.checkArguments({ query, limit: 8 });
    if (!checked.ok) throw new Error('bad bench arguments');
    const started = performance.now();
    await searchTool.execute(checked.params, context);
    return performance.now() - started;
  };
  // The BM25 index is built on the first search of a set; every later turn with the same tools reuses it.
  const firstSearch = await search('calendar event');
  const samples: number[] = [];
  for (let round = 0; round < SEARCHES; round += 1) {
    // A fresh catalog per round: loading would otherwise shrink what is left to find.
    const catalog = createTurnToolCatalog({ tools: [...perTurnTools(), ...deferred], toolSearchMode: 'emulated' });
    const tool = catalog.callable().get('tool_search');
    if (tool === undefined) throw new Error('no tool_search');
    const checked = tool.checkArguments({ query: queries[round % queries.length], limit: 8 });
    if (!checked.ok) throw new Error('bad bench arguments');
    const started = performance.now();
    await tool.execute(checked.params, context);
    samples.push(performance.now() - started);
  }
  console.log(`  tool_search by query (${SEARCHES} searches, 8 results, output text included): first (tokenizes, builds the index) ${firstSearch.toFixed(3)} ms; then ${figures(samples)}`);

  // A source that changed one tool makes a new set: its tools' terms are memoised, the index is rebuilt.
  const rebuilds: number[] = [];
  for (let round = 0; round < 20; round += 1) {
    const changed = [...deferred.slice(0, DEFERRED_TOOLS - 1 - round), ...deferred.slice(DEFERRED_TOOLS - round)];
    const tool = createTurnToolCatalog({ tools: changed, toolSearchMode: 'emulated' }).callable().get('tool_search');
    const checked = tool?.checkArguments({ query: 'create invoice', limit: 8 });
    if (tool === undefined || checked === undefined || !checked.ok) throw new Error('no tool_search');
    const started = performance.now();
    await tool.execute(checked.params, context);
    rebuilds.push(performance.now() - started);
  }
  console.log(`  first search of a changed set (index rebuilt from memoised terms, 20 sets): ${figures(rebuilds)}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runToolSearchBench();
}
