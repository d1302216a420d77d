import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMcpHttpServer, type TestMcpHttpServer } from '../support/mcp-test-server.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

interface TurnEvent {
  readonly type: string;
  readonly callId?: string;
  readonly label?: string;
  readonly [field: string]: unknown;
}

/*
 * The whole path through the HTTP API: a real MCP server (its tools become deferred tools of
 * the `acme` namespace), the real runtime on a port, the scripted model (always emulated mode),
 * and the turn's record read back from the store.
 */
describe('Tool Search through the HTTP API', () => {
  let folder: string;
  let mcp: TestMcpHttpServer;
  let runtime: TestRuntime;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'tool-search-http-'));
    mcp = await startTestMcpHttpServer();
    const configFile = path.join(folder, 'mcp.json');
    await writeFile(configFile, JSON.stringify({ servers: { acme: { transport: 'http', url: mcp.url } } }));
    runtime = await startTestRuntime({ env: { MCP_CONFIG_FILE: configFile, TOOL_SEARCH_MODE: 'native' } });
  });
  afterAll(async () => {
    await runtime.close();
    await mcp.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('finds a tool by query, shows it from the next request on, runs it, and records which lists were sent', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: { id: 'searcher', tools: { todo: true, mcp: ['acme'] } },
        input: 'What is item 42?',
        model: {
          script: [
            { calls: [{ name: 'tool_search', arguments: { query: 'look up an inventory item by number', limit: 2 }, callId: 'search' }] },
            { calls: [{ name: 'acme__lookup', arguments: { id: 42 }, callId: 'lookup' }] },
            { text: 'Item 42 is widget-42.' },
          ],
        },
      }),
    });
    expect(response.status).toBe(200);
    const turn = await readJson(response);
    expect(turn.status).toBe('completed');
    const events = turn.events as TurnEvent[];

    const search = events.filter((event) => event.callId === 'search');
    expect(search.map((event) => [event.type, event.label])).toEqual([
      ['tool.started', "Searching tools for 'look up an inventory item by number'"],
      ['tool.completed', expect.stringMatching(/^Loaded 2 tools: lookup, /)],
    ]);
    expect(events.find((event) => event.type === 'tool.completed' && event.callId === 'lookup')).toMatchObject({ name: 'lookup', output: 'item 42: widget-42, 3 in stock' });
    expect(mcp.events).toContain('called lookup 42');

    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turn.id as string}/tools`));
    const todo = record.tools.find((tool: { name: string }) => tool.name === 'todo');
    const lookup = record.tools.find((tool: { name: string }) => tool.name === 'lookup');
    expect(todo).toMatchObject({ namespace: null, deferLoading: false });
    expect(lookup).toMatchObject({ namespace: 'acme', deferLoading: true });
    // The scripted model runs emulated even on a server configured for native search.
    const names = (tools: { name?: string; type: string }[]) => tools.map((tool) => tool.name ?? tool.type);
    expect(names(record.providerTools)).toEqual(['todo', 'tool_search']);
    const byIteration = record.providerToolsByIteration as { iteration: number; providerTools: { name: string; type: string }[] }[];
    expect(byIteration.map((entry) => entry.iteration)).toEqual([1, 2]);
    expect(names(byIteration[0]!.providerTools)).toEqual(['todo', 'tool_search']);
    const second = names(byIteration[1]!.providerTools);
    expect(second.slice(0, 3)).toEqual(['todo', 'tool_search', 'acme__lookup']);
    expect(second).toHaveLength(4);
    expect(JSON.stringify(byIteration)).not.toContain('defer_loading');
  });

  it('fails a search for an unknown path closed, and the turn goes on', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: { id: 'searcher', tools: { mcp: ['acme'] } },
        input: 'Use the billing tools.',
        model: { script: [{ calls: [{ name: 'tool_search', arguments: { paths: ['billing'] }, callId: 'search' }] }, { text: 'There are no billing tools.' }] },
      }),
    });
    const turn = await readJson(response);
    expect(turn.status).toBe('completed');
    const failed = (turn.events as TurnEvent[]).find((event) => event.type === 'tool.failed');
    expect(failed).toMatchObject({ callId: 'search', label: 'Loading tools: billing', error: { code: 'tool_error', message: expect.stringContaining('unknown tool path "billing"; nothing was loaded.') } });
    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turn.id as string}/tools`));
    expect(record.providerToolsByIteration).toHaveLength(1);
  });
});
