import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { everythingStdio, startEverythingHttp, type EverythingHttpServer } from '../../support/everything-server.js';
import { stdioTestServer } from '../../support/mcp-test-server.js';
import { readJson, startTestRuntime, type TestRuntime } from '../../support/test-runtime.js';
import { parseMetrics, sampleValue } from '../../support/turn-waits.js';
import { eventsFolder } from './mcp-test-kit.js';

interface TurnEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

interface ScriptCall {
  readonly name: string;
  readonly namespace?: string;
  readonly arguments: Record<string, unknown>;
  readonly callId?: string;
}

/**
 * The MCP project's reference server (`@modelcontextprotocol/server-everything`), over stdio
 * and over Streamable HTTP, through the service's own HTTP API.
 */
describe('the MCP reference server through the HTTP API', () => {
  let files: Awaited<ReturnType<typeof eventsFolder>>;
  let remote: EverythingHttpServer;
  let runtime: TestRuntime;

  beforeAll(async () => {
    files = await eventsFolder();
    remote = await startEverythingHttp();
    const configFile = path.join(files.folder, 'mcp.json');
    await writeFile(
      configFile,
      JSON.stringify({
        servers: {
          everything: everythingStdio(),
          everything_http: { transport: 'http', url: remote.url },
          acme: stdioTestServer(),
          down: { transport: 'stdio', command: '/nonexistent/mcp-server' },
        },
      }),
    );
    runtime = await startTestRuntime({ env: { MCP_CONFIG_FILE: configFile } });
  });
  afterAll(async () => {
    await runtime.close();
    await remote.close();
    await files.remove();
  });

  /** One turn of `agent` that loads `paths` with tool_search, then makes `calls` one response at a time. */
  async function runTurn(agent: string, servers: readonly string[], paths: readonly string[], calls: readonly ScriptCall[]): Promise<{ id: string; events: TurnEvent[] }> {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: { id: agent, tools: { mcp: servers } },
        input: 'go',
        model: { script: [{ calls: [{ name: 'tool_search', arguments: { paths } }] }, ...calls.map((call) => ({ calls: [call] })), { text: 'done' }] },
      }),
    });
    const body = await readJson(response);
    expect(response.status).toBe(200);
    expect(body.status).toBe('completed');
    return { id: body.id as string, events: body.events as TurnEvent[] };
  }

  function completedOutput(events: readonly TurnEvent[], callId: string): string {
    const completed = events.find((event) => event.type === 'tool.completed' && event['callId'] === callId);
    if (completed === undefined) throw new Error(`call ${callId} did not complete: ${JSON.stringify(events.filter((event) => event['callId'] === callId))}`);
    return completed['output'] as string;
  }

  async function toggleLogging(agent: string, server: string): Promise<string> {
    const { events } = await runTurn(agent, [server], [`${server}.toggle-simulated-logging`], [
      { name: 'toggle-simulated-logging', namespace: server, arguments: {}, callId: 'toggle' },
    ]);
    return completedOutput(events, 'toggle');
  }

  it.each(['everything', 'everything_http'])("keeps each agent's session state on %s away from every other agent", async (server) => {
    expect(await toggleLogging(`${server}-a`, server)).toMatch(/^Started simulated/);
    // Agent b has a session of its own: its toggle starts logging, it does not stop a's.
    const forB = await toggleLogging(`${server}-b`, server);
    expect(forB).toMatch(/^Started simulated/);
    expect(await toggleLogging(`${server}-a`, server)).toMatch(/^Stopped simulated/);
    expect(await toggleLogging(`${server}-b`, server)).toMatch(/^Stopped simulated/);
    if (server === 'everything_http') {
      const sessionA = /for session (\S+)/.exec(await toggleLogging(`${server}-a`, server))?.[1];
      const sessionB = /for session (\S+)/.exec(forB)?.[1];
      expect(sessionA).toMatch(/^[0-9a-f-]{36}$/);
      expect(sessionB).toMatch(/^[0-9a-f-]{36}$/);
      expect(sessionA).not.toBe(sessionB);
    }
  });

  it('counts the open sessions by server in the metrics, never by agent', async () => {
    const samples = parseMetrics(await (await fetch(`${runtime.baseUrl}/metrics`)).text());
    // The two agents of each server above hold one session each.
    expect(sampleValue(samples, 'turn_runtime_mcp_sessions', { server: 'everything' })).toBe(2);
    expect(sampleValue(samples, 'turn_runtime_mcp_sessions', { server: 'everything_http' })).toBe(2);
    expect(samples.filter((sample) => sample.name === 'turn_runtime_mcp_sessions').every((sample) => Object.keys(sample.labels).join() === 'server')).toBe(true);
  });

  it('runs stdio servers for different agents in separate processes and working folders', async () => {
    const whereOf = async (agent: string) => {
      const { events } = await runTurn(agent, ['acme'], ['acme.where'], [{ name: 'where', namespace: 'acme', arguments: {}, callId: 'where' }]);
      return JSON.parse(completedOutput(events, 'where')) as { pid: number; cwd: string };
    };
    const [first, second] = [await whereOf('folder-a'), await whereOf('folder-b')];
    expect(first.pid).not.toBe(second.pid);
    expect(first.cwd).toBe(path.join(runtime.dataDir, 'agents', 'folder-a', 'mcp', 'acme'));
    expect(second.cwd).toBe(path.join(runtime.dataDir, 'agents', 'folder-b', 'mcp', 'acme'));
  });

  it("leaves a new agent's home reachable by its commands when its MCP folder was made first", async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: { id: 'fresh-agent', tools: { mcp: ['acme'], computer: true } },
        input: 'go',
        model: { script: [{ calls: [{ name: 'run_command', arguments: { command: 'echo made > note.txt && cat note.txt' }, callId: 'cmd' }] }, { text: 'done' }] },
      }),
    });
    const body = await readJson(response);
    expect(completedOutput(body.events as TurnEvent[], 'cmd')).toContain('made');
  });

  it('shows the schemas without $schema, in the tools record and in what the provider is sent', async () => {
    const { id } = await runTurn('schemas', ['everything'], ['everything.get-sum'], []);
    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${id}/tools`));
    const getSum = (record.tools as { name: string; parameters: Record<string, unknown> }[]).find((tool) => tool.name === 'get-sum');
    expect(getSum?.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });
    expect(getSum?.parameters).not.toHaveProperty('$schema');
    const lists = record.providerToolsByIteration as { iteration: number; providerTools: { name: string; parameters?: unknown }[] }[];
    const loaded = lists.at(-1)?.providerTools.find((tool) => tool.name === 'everything__get-sum');
    expect(loaded?.parameters).toEqual(getSum?.parameters);
    expect(JSON.stringify(lists)).not.toContain('$schema');
  });

  it('names a namespaced tool the same way on tool.failed as on tool.started and tool.completed', async () => {
    const { events } = await runTurn('naming', ['everything'], ['everything.get-sum'], [
      { name: 'everything__get-sum', arguments: { a: 2, b: 3 }, callId: 'flat-good' },
      { name: 'everything__get-sum', arguments: { a: 'two', b: 3 }, callId: 'flat-bad' },
      { name: 'get-sum', namespace: 'everything', arguments: { a: 1 }, callId: 'bad' },
    ]);
    expect(completedOutput(events, 'flat-good')).toBe('The sum of 2 and 3 is 5.');
    for (const type of ['tool.started', 'tool.completed']) {
      expect(events.find((event) => event.type === type && event['callId'] === 'flat-good')).toMatchObject({ name: 'get-sum', namespace: 'everything' });
    }
    for (const callId of ['flat-bad', 'bad']) {
      expect(events.find((event) => event.type === 'tool.failed' && event['callId'] === callId)).toMatchObject({
        name: 'get-sum',
        namespace: 'everything',
        error: { code: 'invalid_arguments' },
      });
    }
  });

  it('lists a tool that runs only as an MCP task, and runs it as one, presenting its progress', async () => {
    const { events } = await runTurn('tasks', ['everything'], ['everything.simulate-research-query'], [
      { name: 'simulate-research-query', namespace: 'everything', arguments: { topic: 'tides' }, callId: 'research' },
    ]);
    expect(completedOutput(events, 'research')).toContain('# Research Report: tides');
    const statuses = events.filter((event) => event.type === 'tool.presentation' && event['callId'] === 'research').map((event) => event['event'] as { type: string; data: { status: string } });
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status.type === 'mcp.task_status')).toBe(true);
    expect(statuses.map((status) => status.data.status)).toContain('working');
  }, 30_000);

  it('re-initializes an HTTP session the restarted server no longer knows, within the call', async () => {
    const sum = (callId: string) => runTurn('restart', ['everything_http'], ['everything_http.get-sum'], [{ name: 'get-sum', namespace: 'everything_http', arguments: { a: 2, b: 3 }, callId }]);
    expect(completedOutput((await sum('before')).events, 'before')).toBe('The sum of 2 and 3 is 5.');
    await remote.restart();
    // The reference server answers 400 "No valid session ID provided" to the old session.
    expect(completedOutput((await sum('after')).events, 'after')).toBe('The sum of 2 and 3 is 5.');
  });

  it('offers every other tool, tool_search included, while one server is down', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ agent: { id: 'down', tools: { mcp: ['down', 'everything'], todo: true } }, input: 'hi', model: { script: [{ text: 'hello' }] } }),
    });
    const body = await readJson(response);
    const started = (body.events as TurnEvent[]).find((event) => event.type === 'turn.started');
    expect(started?.['unavailableSources']).toEqual([{ source: 'mcp:down', reason: 'the server command was not found' }]);
    expect(started?.['tools']).toEqual(expect.arrayContaining(['todo', 'get-sum']));
    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${body.id as string}/tools`));
    expect((record.providerTools as { name: string }[]).map((tool) => tool.name)).toEqual(['todo', 'tool_search']);
  });
});

describe('MCP session limits, set in the environment', () => {
  let files: Awaited<ReturnType<typeof eventsFolder>>;
  let runtime: TestRuntime;

  beforeAll(async () => {
    files = await eventsFolder();
    const configFile = path.join(files.folder, 'mcp.json');
    await writeFile(configFile, JSON.stringify({ servers: { everything: everythingStdio() } }));
    runtime = await startTestRuntime({ env: { MCP_CONFIG_FILE: configFile, MCP_MAX_SESSIONS: '1', MCP_SESSION_IDLE_MS: '1000' } });
  });
  afterAll(async () => {
    await runtime.close();
    await files.remove();
  });

  async function toggle(agent: string): Promise<string> {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: { id: agent, tools: { mcp: ['everything'] } },
        input: 'go',
        model: {
          script: [
            { calls: [{ name: 'tool_search', arguments: { paths: ['everything.toggle-simulated-logging'] } }] },
            { calls: [{ name: 'toggle-simulated-logging', namespace: 'everything', arguments: {}, callId: 'toggle' }] },
            { text: 'done' },
          ],
        },
      }),
    });
    const events = (await readJson(response)).events as TurnEvent[];
    return events.find((event) => event.type === 'tool.completed' && event['callId'] === 'toggle')?.['output'] as string;
  }
  const openSessions = async () => sampleValue(parseMetrics(await (await fetch(`${runtime.baseUrl}/metrics`)).text()), 'turn_runtime_mcp_sessions', { server: 'everything' });

  it('closes the least recently used session for a new one past MCP_MAX_SESSIONS: its state is gone', async () => {
    expect(await toggle('first')).toMatch(/^Started/);
    expect(await toggle('second')).toMatch(/^Started/);
    expect(await openSessions()).toBe(1);
    // first's session was closed to make room, so its logging is not on any more.
    expect(await toggle('first')).toMatch(/^Started/);
  });

  it('closes a session unused for MCP_SESSION_IDLE_MS', async () => {
    expect(await toggle('idle')).toMatch(/^Started/);
    expect(await openSessions()).toBe(1);
    await vi.waitFor(async () => {
      expect(await openSessions()).toBe(0);
    }, { timeout: 10_000, interval: 100 });
    expect(await toggle('idle')).toMatch(/^Started/);
  });
});
