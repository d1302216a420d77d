import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { createRuntime } from '../../../src/runtime.js';
import { McpConfigError } from '../../../src/tools/mcp/load-mcp-config.js';
import { startTestMcpHttpServer, stdioTestServer, type TestMcpHttpServer } from '../../support/mcp-test-server.js';
import { readJson, startTestRuntime, type TestRuntime } from '../../support/test-runtime.js';
import { eventsFolder } from './mcp-test-kit.js';

interface TurnEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

describe('MCP tools through the HTTP API', () => {
  let files: Awaited<ReturnType<typeof eventsFolder>>;
  let httpServer: TestMcpHttpServer;
  let runtime: TestRuntime;

  beforeAll(async () => {
    files = await eventsFolder();
    httpServer = await startTestMcpHttpServer();
    const configFile = path.join(files.folder, 'mcp.json');
    await writeFile(
      configFile,
      JSON.stringify({
        servers: {
          acme: stdioTestServer({ eventsFile: files.eventsFile }),
          remote: { transport: 'http', url: httpServer.url },
          down: { transport: 'stdio', command: '/nonexistent/mcp-server' },
        },
      }),
    );
    runtime = await startTestRuntime({ env: { MCP_CONFIG_FILE: configFile } });
  });
  afterAll(async () => {
    await runtime.close();
    await httpServer.close();
    await files.remove();
  });

  async function runTurn(body: unknown): Promise<{ status: number; body: any; turnId: string | null }> {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await readJson(response), turnId: response.headers.get('turn-id') };
  }

  it('answers 400 for a server name that is not configured, creating no turn', async () => {
    const { status, body, turnId } = await runTurn({ agent: { id: 'a1', tools: { mcp: ['acme', 'ghost'] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
    expect(status).toBe(400);
    expect(turnId).toBeNull();
    expect(body.error).toEqual({
      code: 'invalid_request',
      message: 'agent.tools.mcp.1: no MCP server named "ghost" is configured',
      issues: [{ path: ['agent', 'tools', 'mcp', 1], message: 'no MCP server named "ghost" is configured' }],
    });
  });

  it('runs a turn that finds an MCP tool with tool_search and calls it; the schema is enforced first', async () => {
    const { status, body } = await runTurn({
      agent: { id: 'a1', tools: { mcp: ['acme'] } },
      input: 'look up item 42',
      model: {
        script: [
          { calls: [{ name: 'tool_search', arguments: { paths: ['acme.lookup'] }, callId: 'search' }] },
          { calls: [{ name: 'lookup', namespace: 'acme', arguments: { id: 42 }, callId: 'good' }] },
          { calls: [{ name: 'lookup', namespace: 'acme', arguments: { id: 500 }, callId: 'bad' }] },
          { text: 'item 42 is widget-42' },
        ],
      },
    });
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    const events = body.events as TurnEvent[];
    const completed = events.find((event) => event.type === 'tool.completed' && event['callId'] === 'good');
    expect(completed).toMatchObject({ name: 'lookup', namespace: 'acme', label: 'Called acme.lookup', output: 'item 42: widget-42, 3 in stock' });
    expect(events.find((event) => event.type === 'tool.started' && event['callId'] === 'good')).toMatchObject({ label: 'Calling acme.lookup', executionMode: 'parallel' });
    const rejected = events.find((event) => event.type === 'tool.failed' && event['callId'] === 'bad');
    expect(rejected).toMatchObject({ error: { code: 'invalid_arguments' } });
    expect((rejected?.['error'] as { message: string }).message).toContain('must be <= 100');
    const seen = await files.events();
    expect(seen).toContain('called lookup 42');
    expect(seen).not.toContain('called lookup 500');
  });

  it('records the MCP tools of a turn, deferred and namespaced, with their schemas as sent', async () => {
    const { turnId } = await runTurn({ agent: { id: 'a1', tools: { mcp: ['acme', 'remote'] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
    const response = await fetch(`${runtime.baseUrl}/turns/${turnId ?? ''}/tools`);
    expect(response.status).toBe(200);
    const record = await readJson(response);
    const lookups = (record.tools as { name: string; namespace: string | null }[]).filter((tool) => tool.name === 'lookup');
    expect(lookups.map((tool) => tool.namespace)).toEqual(['acme', 'remote']);
    for (const tool of lookups) {
      expect(tool).toMatchObject({
        deferLoading: true,
        executionMode: 'parallel',
        isReadOnly: true,
        isDestructive: false,
        schemaSource: 'json',
        parameters: { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 100 } }, required: ['id'] },
      });
    }
    expect(record.tools.find((tool: { name: string }) => tool.name === 'get_user')).toMatchObject({ namespace: 'acme', deferLoading: true });
    expect(record.tools.find((tool: { name: string }) => tool.name === 'delete_item')).toMatchObject({ executionMode: 'sequential', isDestructive: true });
    // Deferred: the first request shows tool_search, not the MCP schemas themselves.
    expect((record.providerTools as { name: string }[]).map((tool) => tool.name)).toEqual(['tool_search']);
  });

  it('cancels the server-side call when the turn is cancelled', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { accept: 'application/x-ndjson', 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: { id: 'a1', tools: { mcp: ['remote'] } },
        input: 'wait',
        model: { script: [{ calls: [{ name: 'tool_search', arguments: { paths: ['remote.slow'] } }] }, { calls: [{ name: 'slow', namespace: 'remote', arguments: {}, callId: 'slow' }] }] },
      }),
    });
    const turnId = response.headers.get('turn-id') ?? '';
    await httpServer.waitForEvent('started slow');
    expect((await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' })).status).toBe(202);
    const events = (await response.text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as TurnEvent);
    expect(events.find((event) => event.type === 'tool.failed' && event['callId'] === 'slow')).toMatchObject({ error: { code: 'aborted' } });
    expect(events.at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'cancel_requested' });
    await httpServer.waitForEvent('cancelled slow');
  });

  it('runs the turn without a server that is down, saying so in turn.started', async () => {
    const { status, body } = await runTurn({ agent: { id: 'a1', tools: { mcp: ['down', 'acme'] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    const started = (body.events as TurnEvent[]).find((event) => event.type === 'turn.started');
    expect(started?.['unavailableSources']).toEqual([{ source: 'mcp:down', reason: 'the server command was not found' }]);
    expect(started?.['tools']).toEqual(expect.arrayContaining(['lookup']));
  });
});

describe('a bad MCP config file', () => {
  it('stops start-up with a message naming the file and the bad path', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'mcp-bad-config-'));
    try {
      const file = path.join(folder, 'mcp.json');
      await writeFile(file, JSON.stringify({ servers: { 'bad name': { transport: 'stdio', command: 'x' }, ok: { transport: 'http', url: 'nope' } } }));
      const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: folder, MCP_CONFIG_FILE: file });
      const error: unknown = await createRuntime({ config, logger: pino({ level: 'silent' }) }).then(
        async (runtime) => {
          await runtime.app.close();
          return undefined;
        },
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(McpConfigError);
      const { message } = error as McpConfigError;
      expect(message).toContain(`MCP_CONFIG_FILE ${file}: servers["bad name"]: a server name must match ^[A-Za-z0-9_-]{1,64}$`);
      expect(message).toContain(`MCP_CONFIG_FILE ${file}: servers.ok.url: must be an http:// or https:// URL`);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
