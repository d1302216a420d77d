import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import { collectMcpTools } from '../../../src/tools/mcp/collect-mcp-tools.js';
import { startTestMcpHttpServer, TEST_SERVER_INSTRUCTIONS, type TestMcpHttpServer } from '../../support/mcp-test-server.js';
import { callTool, createTestRegistry, eventually, noAbort, toolNamed, type RegistryHarness } from './mcp-test-kit.js';

describe('an MCP server over Streamable HTTP', () => {
  let server: TestMcpHttpServer;
  let harness: RegistryHarness;
  let tools: readonly WorkerAgentTool[];

  beforeAll(async () => {
    server = await startTestMcpHttpServer();
    harness = createTestRegistry({ inventory: { transport: 'http', url: server.url, headers: { 'x-api-key': 'key-123' } } });
    tools = await harness.registry.toolsFor('inventory', 'a1', noAbort);
  });
  afterAll(async () => {
    await harness.registry.close();
    await server.close();
  });

  it('projects the tools in the server namespace, sending the configured headers', () => {
    expect(tools.map((tool) => tool.name)).toEqual(['lookup', 'delete_item', 'update_note', 'fail', 'slow', 'get_user', 'snapshot', 'resources', 'enable_extra']);
    for (const tool of tools) expect(tool).toMatchObject({ namespace: 'inventory', namespaceDescription: TEST_SERVER_INSTRUCTIONS, deferLoading: true });
    expect(server.firstHeaders?.['x-api-key']).toBe('key-123');
  });

  it('calls a tool and returns the server text', async () => {
    expect(await callTool({ tool: toolNamed(tools, 'lookup'), rawArguments: '{"id":7}' })).toMatchObject({ ok: true, result: { content: 'item 7: widget-7, 3 in stock' } });
    expect(server.events).toContain('called lookup 7');
  });

  it('enforces the schema before the call reaches the server', async () => {
    expect(await callTool({ tool: toolNamed(tools, 'lookup'), rawArguments: '{"id":101}' })).toEqual({ ok: false, rejected: 'invalid arguments for lookup: id: must be <= 100' });
    expect(server.events).not.toContain('called lookup 101');
  });

  it('throws the server text when the tool answers isError', async () => {
    await expect(callTool({ tool: toolNamed(tools, 'fail'), rawArguments: '{}' })).rejects.toThrow('item 7 is locked by another user');
  });

  it('cancels a running call: the call settles at once and the server sees the cancellation', async () => {
    const controller = new AbortController();
    const pending = callTool({ tool: toolNamed(tools, 'slow'), rawArguments: '{}', signal: controller.signal });
    await server.waitForEvent('started slow');
    controller.abort(new Error('the turn was cancelled'));
    await expect(pending).rejects.toThrow('the turn was cancelled');
    await server.waitForEvent('cancelled slow');
  });

  it('relists when the server announces a change, keeping unchanged tools the same objects', async () => {
    server.enableExtraTool();
    let relisted: readonly WorkerAgentTool[] = [];
    await eventually(async () => {
      relisted = await harness.registry.toolsFor('inventory', 'a1', noAbort);
      expect(relisted.map((tool) => tool.name)).toContain('extra_tool');
    });
    expect(toolNamed(relisted, 'lookup')).toBe(toolNamed(tools, 'lookup'));
  });
});

describe('an HTTP MCP server that is not there', () => {
  it('contributes no tools, one unavailable entry and one warning, and is not retried before the backoff', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      closed.close(() => {
        resolve();
      });
    });

    const harness = createTestRegistry({ gone: { transport: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: {} } });
    try {
      const first = await collectMcpTools({ names: ['gone'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger });
      expect(first.tools).toEqual([]);
      expect(first.unavailable).toEqual([{ source: 'mcp:gone', reason: 'could not connect to the server (ECONNREFUSED)' }]);
      expect(harness.log.warnings().map((record) => record.msg)).toEqual(['MCP server "gone" is unavailable for this turn: could not connect to the server (ECONNREFUSED)']);

      const second = await collectMcpTools({ names: ['gone'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger });
      expect(second.unavailable).toEqual([{ source: 'mcp:gone', reason: 'could not connect to the server (ECONNREFUSED); next attempt in 1 s' }]);
    } finally {
      await harness.registry.close();
    }
  });
});
