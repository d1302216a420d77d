import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import type { JsonObject } from '../src/json.js';
import { McpSchemaInterner } from '../src/tools/mcp/mcp-schema-interner.js';
import { projectMcpTools } from '../src/tools/mcp/project-mcp-tools.js';
import { createTurnToolCatalog } from '../src/turns/create-turn-tool-catalog.js';

/** Tools one server lists (the most a server may give is 500). */
const TOOLS = Number(process.env['BENCH_MCP_TOOLS'] ?? 300);
const AGENTS = 5;

/**
 * What a new agent's first MCP session costs the service in CPU, past the server's own
 * start: projecting the listing into tools (schema compilation) and the first turn's catalog
 * and search. Sessions are per agent, so this is paid once per agent (and again after an
 * idle close). Measured with the server's schemas shared between agents' sessions (what the
 * service does) and with each session compiling its own, in one run.
 */
export async function runMcpAgentSessionsBench(): Promise<void> {
  const listingText = JSON.stringify({ tools: Array.from({ length: TOOLS }, (_, index) => listedTool(index)) });
  const context = { signal: new AbortController().signal, callId: 'bench', logger: pino({ level: 'silent' }), present: () => undefined, reportStopped: () => undefined };

  const newAgent = async (schemas: McpSchemaInterner | undefined): Promise<{ project: number; catalog: number; search: number }> => {
    // Every session decodes its own listing, as the SDK does: fresh objects each time.
    const listed = (JSON.parse(listingText) as { tools: (Tool & { inputSchema: JsonObject })[] }).tools;
    const started = performance.now();
    const projected = projectMcpTools({
      server: 'crm',
      namespaceDescription: 'The CRM.',
      listing: { tools: listed.map((definition) => ({ definition, inputSchema: definition.inputSchema })), skipped: [] },
      previous: new Map(),
      callTool: () => Promise.resolve({ content: [] }),
      ...(schemas === undefined ? {} : { schemas }),
    });
    const projectedAt = performance.now();
    const catalog = createTurnToolCatalog({ tools: projected.tools, toolSearchMode: 'emulated' });
    catalog.providerTools();
    const catalogAt = performance.now();
    const search = catalog.callable().get('tool_search');
    const checked = search?.checkArguments({ query: 'update invoice', limit: 8 });
    if (search === undefined || checked?.ok !== true) throw new Error('no tool_search');
    await search.execute(checked.params, context);
    return { project: projectedAt - started, catalog: catalogAt - projectedAt, search: performance.now() - catalogAt };
  };

  console.log(`MCP sessions per agent: ${TOOLS} tools listed by one server, ${AGENTS} new agents each way`);
  const shared = new McpSchemaInterner();
  const first = await newAgent(shared);
  console.log(`  first agent (compiles):        ${line(first)}`);
  const sharedRuns: number[] = [];
  for (let agent = 0; agent < AGENTS; agent += 1) {
    const run = await newAgent(shared);
    sharedRuns.push(run.project);
    console.log(`  next agent, shared schemas:    ${line(run)}`);
  }
  const ownRuns: number[] = [];
  for (let agent = 0; agent < AGENTS; agent += 1) {
    const run = await newAgent(undefined);
    ownRuns.push(run.project);
    console.log(`  next agent, own schemas:       ${line(run)}`);
  }
  console.log(`  projection, own ÷ shared (medians): ${(median(ownRuns) / median(sharedRuns)).toFixed(0)}×`);
}

function listedTool(index: number): JsonObject {
  const nouns = ['invoice', 'customer', 'order', 'ticket', 'contact', 'deal'];
  const verbs = ['get', 'list', 'create', 'update', 'delete'];
  const noun = nouns[index % nouns.length] ?? 'record';
  const verb = verbs[Math.floor(index / nouns.length) % verbs.length] ?? 'get';
  return {
    name: `${verb}_${noun}_${String(index)}`,
    description: `${verb} a ${noun} (variant ${String(index)}).`,
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        id: { type: 'string', pattern: `^${noun}-[0-9]+$` },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        since: { type: 'string', format: 'date-time' },
        [`${noun}_fields_${String(index)}`]: { type: 'array', items: { type: 'string', maxLength: 40 } },
      },
      required: ['id'],
      additionalProperties: false,
    },
  };
}

function line(run: { project: number; catalog: number; search: number }): string {
  return `projection ${run.project.toFixed(1)} ms, first catalog ${run.catalog.toFixed(1)} ms, first search ${run.search.toFixed(1)} ms`;
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runMcpAgentSessionsBench();
