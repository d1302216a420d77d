import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import { STABLE_SESSION_MS } from '../../../src/tools/mcp/mcp-server-connection.js';
import { McpUnavailableError } from '../../../src/tools/mcp/mcp-unavailable-error.js';
import { stdioTestServer, TEST_SERVER_INSTRUCTIONS, TINY_PNG_BASE64 } from '../../support/mcp-test-server.js';
import { callTool, createTestRegistry, eventsFolder, eventually, noAbort, toolNamed, where, type RegistryHarness } from './mcp-test-kit.js';

describe('an MCP server over stdio', () => {
  let files: Awaited<ReturnType<typeof eventsFolder>>;
  let harness: RegistryHarness;
  let tools: readonly WorkerAgentTool[];

  beforeAll(async () => {
    files = await eventsFolder();
    harness = createTestRegistry({ acme: stdioTestServer({ eventsFile: files.eventsFile }) });
    tools = await harness.registry.toolsFor('acme', 'a1', noAbort);
  });
  afterAll(async () => {
    await harness.registry.close();
    await files.remove();
  });

  it('projects every usable tool as a deferred tool in the server namespace', () => {
    expect(tools.map((tool) => tool.name)).toEqual(['lookup', 'delete_item', 'update_note', 'fail', 'slow', 'get_user', 'snapshot', 'resources', 'enable_extra', 'exit_process', 'where']);
    for (const tool of tools) {
      expect(tool).toMatchObject({ namespace: 'acme', namespaceDescription: TEST_SERVER_INSTRUCTIONS, deferLoading: true, schemaSource: 'json', strict: false });
    }
  });

  it('sends each schema exactly as the server listed it, but for $schema', async () => {
    const client = new Client({ name: 'reference', version: '1' });
    const { command, args } = stdioTestServer();
    await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
    try {
      const listed = new Map(
        (await client.listTools()).tools.map((tool) => {
          expect(tool.inputSchema['$schema']).toBe('http://json-schema.org/draft-07/schema#');
          const { $schema: _dialect, ...schema } = tool.inputSchema;
          return [tool.name, schema];
        }),
      );
      expect(toolNamed(tools, 'lookup').parameters).toEqual(listed.get('lookup'));
      expect(toolNamed(tools, 'get_user').parameters).toEqual(listed.get('get.user'));
      expect(toolNamed(tools, 'lookup').parameters).toMatchObject({ properties: { id: { type: 'integer', minimum: 1, maximum: 100 } } });
      for (const tool of tools) {
        const original = tool.name === 'get_user' ? 'get.user' : tool.name;
        expect(tool.parameters).toEqual(listed.get(original));
      }
    } finally {
      await client.close();
    }
  });

  it('runs only read-only, non-destructive tools in parallel; unannotated tools count as destructive', () => {
    const effects = (name: string) => {
      const tool = toolNamed(tools, name);
      return [tool.executionMode, tool.isReadOnly, tool.isDestructive];
    };
    expect(effects('lookup')).toEqual(['parallel', true, false]);
    expect(effects('get_user')).toEqual(['parallel', true, false]);
    expect(effects('delete_item')).toEqual(['sequential', false, true]);
    expect(effects('update_note')).toEqual(['sequential', false, true]);
  });

  it('leaves out a tool whose schema does not compile, with a warning naming it', () => {
    expect(tools.some((tool) => tool.name === 'broken_schema')).toBe(false);
    const warning = harness.log.warnings().find((record) => record['tool'] === 'broken_schema');
    expect(warning?.msg).toContain('does not compile');
  });

  it('calls a tool and returns the server text, with labels and structured details', async () => {
    const lookup = toolNamed(tools, 'lookup');
    const outcome = await callTool({ tool: lookup, rawArguments: '{"id": 42}' });
    expect(outcome).toEqual({
      ok: true,
      result: { content: 'item 42: widget-42, 3 in stock', details: { server: 'acme', tool: 'lookup', structuredContent: { id: 42, name: 'widget-42', stock: 3 } } },
    });
    expect(lookup.describeActivity({ id: 42 })).toBe('Calling acme.lookup');
    expect(lookup.describeCompletedActivity?.({ id: 42 }, { content: '' })).toBe('Called acme.lookup');
  });

  it('enforces the schema constraints before a call reaches the server', async () => {
    const lookup = toolNamed(tools, 'lookup');
    for (const rawArguments of ['{"id": 500}', '{"id": 0}', '{"id": 2.5}', '{"id": "7"}', '{}']) {
      const outcome = await callTool({ tool: lookup, rawArguments });
      expect(outcome.ok, rawArguments).toBe(false);
    }
    expect(await callTool({ tool: lookup, rawArguments: '{"id": 500}' })).toEqual({ ok: false, rejected: 'invalid arguments for lookup: id: must be <= 100' });
    await callTool({ tool: lookup, rawArguments: '{"id": 99}' });
    const calls = (await files.events()).filter((event) => event.startsWith('called lookup'));
    expect(calls).not.toContain('called lookup 500');
    expect(calls).not.toContain('called lookup 0');
    expect(calls).toContain('called lookup 99');
  });

  it('calls a renamed tool by its original name', async () => {
    const outcome = await callTool({ tool: toolNamed(tools, 'get_user'), rawArguments: '{"name":"ada"}' });
    expect(outcome).toMatchObject({ ok: true, result: { content: 'user ada is active' } });
  });

  it('throws the server text when the tool answers isError', async () => {
    await expect(callTool({ tool: toolNamed(tools, 'fail'), rawArguments: '{}' })).rejects.toThrow(new Error('item 7 is locked by another user'));
  });

  it('returns images as image parts and resources as text', async () => {
    const snapshot = await callTool({ tool: toolNamed(tools, 'snapshot'), rawArguments: '{}' });
    expect(snapshot).toMatchObject({
      ok: true,
      result: { content: [{ type: 'text', text: 'shelf 4' }, { type: 'image', mediaType: 'image/png', data: TINY_PNG_BASE64 }] },
    });
    const resources = await callTool({ tool: toolNamed(tools, 'resources'), rawArguments: '{}' });
    expect(resources).toMatchObject({
      ok: true,
      result: {
        content: '[resource link: shelf manual <file:///manuals/shelf.pdf> (application/pdf, How to stack shelves)]\n[resource <file:///notes/today.txt> (text/plain)]\nrestock aisle 3',
      },
    });
  });

  it('cancels a running call: the call settles at once and the server sees the cancellation', async () => {
    const controller = new AbortController();
    const pending = callTool({ tool: toolNamed(tools, 'slow'), rawArguments: '{}', signal: controller.signal });
    await eventually(async () => {
      expect(await files.events()).toContain('started slow');
    });
    controller.abort(new Error('the turn was cancelled'));
    // The slow tool would answer after a minute; the call settles long before the test's timeout.
    await expect(pending).rejects.toThrow('the turn was cancelled');
    await eventually(async () => {
      expect(await files.events()).toContain('cancelled slow');
    });
  });

  it('hands every assembly the same tool objects', async () => {
    const again = await harness.registry.toolsFor('acme', 'a1', noAbort);
    expect(again).toHaveLength(tools.length);
    again.forEach((tool, index) => {
      expect(tool).toBe(tools[index]);
    });
  });

  it('relists when the server announces a change, keeping unchanged tools the same objects', async () => {
    await callTool({ tool: toolNamed(tools, 'enable_extra'), rawArguments: '{}' });
    let relisted: readonly WorkerAgentTool[] = [];
    await eventually(async () => {
      relisted = await harness.registry.toolsFor('acme', 'a1', noAbort);
      expect(relisted.map((tool) => tool.name)).toContain('extra_tool');
    });
    expect(toolNamed(relisted, 'lookup')).toBe(toolNamed(tools, 'lookup'));
    expect(await callTool({ tool: toolNamed(relisted, 'extra_tool'), rawArguments: '{}' })).toMatchObject({ ok: true, result: { content: 'extra!' } });
  });
});

describe('a stdio server that dies', () => {
  /** Makes the server process exit and waits until the registry has noticed. */
  async function kill(harness: RegistryHarness, tools: readonly WorkerAgentTool[], notice: string): Promise<void> {
    const warned = harness.log.warnings().filter((record) => record.msg === notice).length;
    await callTool({ tool: toolNamed(tools, 'exit_process'), rawArguments: '{}' });
    await eventually(() => {
      expect(harness.log.warnings().filter((record) => record.msg === notice).length).toBe(warned + 1);
    });
  }
  const REOPENS = 'lost the MCP server: the server closed the connection; reopening it at its next use';
  const WAITS = 'lost the MCP server: the server closed the connection';

  it('is started again at its next use, with no wait and the same tool objects', async () => {
    const harness = createTestRegistry({ acme: stdioTestServer() });
    try {
      const before = await harness.registry.toolsFor('acme', 'a1', noAbort);
      const { pid } = await where(before);
      await kill(harness, before, REOPENS);
      const after = await harness.registry.toolsFor('acme', 'a1', noAbort);
      after.forEach((tool, index) => {
        expect(tool).toBe(before[index]);
      });
      expect((await where(after)).pid).not.toBe(pid);
    } finally {
      await harness.registry.close();
    }
  });

  it('waits out the backoff when it dies again soon after it was started, then comes back with the same tool objects', async () => {
    const harness = createTestRegistry({ acme: stdioTestServer() });
    try {
      const before = await harness.registry.toolsFor('acme', 'a1', noAbort);
      await kill(harness, before, REOPENS);
      await kill(harness, await harness.registry.toolsFor('acme', 'a1', noAbort), WAITS);
      await expect(harness.registry.toolsFor('acme', 'a1', noAbort)).rejects.toThrow(new McpUnavailableError('acme', 'the server closed the connection; next attempt in 1 s'));
      // A call of a tool the turn already has says why, in words the model can read.
      await expect(callTool({ tool: toolNamed(before, 'lookup'), rawArguments: '{"id":5}' })).rejects.toThrow(
        'the MCP server "acme" is unavailable: the server closed the connection; next attempt in 1 s',
      );

      harness.clock.advance(1_000);
      const after = await harness.registry.toolsFor('acme', 'a1', noAbort);
      after.forEach((tool, index) => {
        expect(tool).toBe(before[index]);
      });
      expect(await callTool({ tool: toolNamed(after, 'lookup'), rawArguments: '{"id":5}' })).toMatchObject({ ok: true, result: { content: 'item 5: widget-5, 3 in stock' } });
      // Dying soon after that start is the third early loss in a row: 2 s now.
      await kill(harness, after, WAITS);
      await expect(harness.registry.toolsFor('acme', 'a1', noAbort)).rejects.toThrow('next attempt in 2 s');
    } finally {
      await harness.registry.close();
    }
  });

  it('is started again at once after a session that served a while, whatever came before', async () => {
    const harness = createTestRegistry({ acme: stdioTestServer() });
    try {
      await kill(harness, await harness.registry.toolsFor('acme', 'a1', noAbort), REOPENS);
      const tools = await harness.registry.toolsFor('acme', 'a1', noAbort);
      harness.clock.advance(STABLE_SESSION_MS);
      await kill(harness, tools, REOPENS);
      expect(await callTool({ tool: toolNamed(tools, 'lookup'), rawArguments: '{"id":6}' })).toMatchObject({ ok: true });
    } finally {
      await harness.registry.close();
    }
  });
});
