import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpUnavailableError } from '../../../src/tools/mcp/mcp-unavailable-error.js';
import { startTestMcpHttpServer, stdioTestServer, type TestMcpHttpServer } from '../../support/mcp-test-server.js';
import { callTool, createTestRegistry, eventsFolder, eventually, noAbort, toolNamed, where, type RegistryHarness } from './mcp-test-kit.js';


function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('MCP sessions belong to one agent', () => {
  let files: Awaited<ReturnType<typeof eventsFolder>>;
  let http: TestMcpHttpServer;

  beforeAll(async () => {
    files = await eventsFolder();
    http = await startTestMcpHttpServer();
  });
  afterAll(async () => {
    await http.close();
    await files.remove();
  });

  async function withRegistry(options: Parameters<typeof createTestRegistry>[1], run: (harness: RegistryHarness) => Promise<void>): Promise<void> {
    const harness = createTestRegistry(
      { acme: stdioTestServer(), acme2: stdioTestServer(), remote: { transport: 'http', url: http.url, headers: {} } },
      { agentsFolder: path.join(files.folder, 'agents'), ...options },
    );
    try {
      await run(harness);
    } finally {
      await harness.registry.close();
    }
  }

  it('gives each agent its own stdio process, in a working folder of its own', async () => {
    await withRegistry({}, async ({ registry }) => {
      const first = await where(await registry.toolsFor('acme', 'agent-a', noAbort));
      const second = await where(await registry.toolsFor('acme', 'agent-b', noAbort));
      expect(first.pid).not.toBe(second.pid);
      expect(first.cwd).toBe(path.join(files.folder, 'agents', 'agent-a', 'mcp', 'acme'));
      expect(second.cwd).toBe(path.join(files.folder, 'agents', 'agent-b', 'mcp', 'acme'));
      expect((await stat(first.cwd)).mode & 0o777).toBe(0o700);
      // Made before the agent's home may be: the sandbox user must still pass through to the home.
      expect((await stat(path.join(files.folder, 'agents', 'agent-a'))).mode & 0o777).toBe(0o711);
      // Each agent's tools are its own, but an equal schema is one object, compiled once.
      const forA = toolNamed(await registry.toolsFor('acme', 'agent-a', noAbort), 'lookup');
      const forB = toolNamed(await registry.toolsFor('acme', 'agent-b', noAbort), 'lookup');
      expect(forA).not.toBe(forB);
      expect(forA.parameters).toBe(forB.parameters);
      // The same agent's turns share its session.
      expect((await where(await registry.toolsFor('acme', 'agent-a', noAbort))).pid).toBe(first.pid);
      expect(registry.sessions.map((session) => [session.server, session.agentId])).toEqual([
        ['acme', 'agent-b'],
        ['acme', 'agent-a'],
      ]);
    });
  });

  it('keeps one agent\'s HTTP session state away from another\'s', async () => {
    await withRegistry({}, async ({ registry }) => {
      const before = http.sessionsOpened;
      const forA = await registry.toolsFor('remote', 'agent-a', noAbort);
      const forB = await registry.toolsFor('remote', 'agent-b', noAbort);
      expect(http.sessionsOpened - before).toBe(2);
      // enable_extra turns extra_tool on for the session it is called in only.
      await callTool({ tool: toolNamed(forA, 'enable_extra'), rawArguments: '{}' });
      await eventually(async () => {
        expect((await registry.toolsFor('remote', 'agent-a', noAbort)).map((tool) => tool.name)).toContain('extra_tool');
      });
      expect((await registry.toolsFor('remote', 'agent-b', noAbort)).map((tool) => tool.name)).not.toContain('extra_tool');
      expect(forB.map((tool) => tool.name)).not.toContain('extra_tool');
    });
  });

  it('closes a session unused for the idle time, and opens a new one when a tool of it is called again', async () => {
    await withRegistry({ limits: { idleCloseMs: 60_000 } }, async ({ registry, clock }) => {
      const tools = await registry.toolsFor('acme', 'agent-a', noAbort);
      const { pid } = await where(tools);
      clock.advance(59_000);
      registry.closeIdle();
      expect(registry.sessions).toHaveLength(1);
      expect(registry.openSessionsByServer()).toEqual(new Map([['acme', 1]]));
      clock.advance(1_000);
      registry.closeIdle();
      expect(registry.sessions).toEqual([]);
      expect(registry.openSessionsByServer()).toEqual(new Map());
      await eventually(() => {
        expect(isRunning(pid)).toBe(false);
      });
      // A turn that still holds the tools reaches the agent's new session.
      const again = await where(tools);
      expect(again.pid).not.toBe(pid);
      expect(registry.sessions.map((session) => [session.server, session.agentId, session.open])).toEqual([['acme', 'agent-a', true]]);
    });
  });

  it('never closes a session while one of its calls runs', async () => {
    await withRegistry({ limits: { idleCloseMs: 1_000 } }, async ({ registry, clock }) => {
      const tools = await registry.toolsFor('acme', 'agent-a', noAbort);
      const controller = new AbortController();
      const slow = callTool({ tool: toolNamed(tools, 'slow'), rawArguments: '{}', signal: controller.signal });
      await eventually(() => {
        expect(registry.sessions[0]?.active).toBe(1);
      });
      clock.advance(5_000);
      registry.closeIdle();
      expect(registry.sessions).toHaveLength(1);
      controller.abort();
      await expect(slow).rejects.toThrow();
      clock.advance(1_000);
      registry.closeIdle();
      expect(registry.sessions).toEqual([]);
    });
  });

  it('closes the agent\'s least recently used idle session to stay within its limit, and refuses when all are in use', async () => {
    await withRegistry({ limits: { maxPerAgent: 1 } }, async ({ registry }) => {
      const acme = await registry.toolsFor('acme', 'agent-a', noAbort);
      const { pid } = await where(acme);
      await registry.toolsFor('acme2', 'agent-a', noAbort);
      expect(registry.sessions.map((session) => session.server)).toEqual(['acme2']);
      await eventually(() => {
        expect(isRunning(pid)).toBe(false);
      });
      // Another agent is not limited by this one's sessions.
      await registry.toolsFor('acme', 'agent-b', noAbort);

      const acme2 = await registry.toolsFor('acme2', 'agent-a', noAbort);
      const controller = new AbortController();
      const slow = callTool({ tool: toolNamed(acme2, 'slow'), rawArguments: '{}', signal: controller.signal });
      await eventually(() => {
        expect(registry.sessions.find((session) => session.server === 'acme2')?.active).toBe(1);
      });
      await expect(registry.toolsFor('acme', 'agent-a', noAbort)).rejects.toThrow(
        new McpUnavailableError('acme', "the agent's 1 MCP session(s) (MCP_MAX_SESSIONS_PER_AGENT) are all in use"),
      );
      controller.abort();
      await expect(slow).rejects.toThrow();
    });
  });

  it('closes the service\'s least recently used idle session to stay within its limit', async () => {
    await withRegistry({ limits: { maxTotal: 2 } }, async ({ registry }) => {
      await registry.toolsFor('acme', 'agent-a', noAbort);
      await registry.toolsFor('acme', 'agent-b', noAbort);
      await registry.toolsFor('acme', 'agent-a', noAbort);
      await registry.toolsFor('acme', 'agent-c', noAbort);
      expect(registry.sessions.map((session) => session.agentId)).toEqual(['agent-a', 'agent-c']);
    });
  });

  it('opens a new HTTP session within the call when the server forgot the old one', async () => {
    await withRegistry({}, async ({ registry, log }) => {
      const tools = await registry.toolsFor('remote', 'agent-a', noAbort);
      expect(await callTool({ tool: toolNamed(tools, 'lookup'), rawArguments: '{"id":3}' })).toMatchObject({ ok: true });
      const opened = http.sessionsOpened;
      await http.forgetSessions();
      expect(await callTool({ tool: toolNamed(tools, 'lookup'), rawArguments: '{"id":4}' })).toMatchObject({ ok: true, result: { content: 'item 4: widget-4, 3 in stock' } });
      expect(http.sessionsOpened).toBe(opened + 1);
      expect(log.records.map((record) => record.msg)).toContain('the server forgot the session; opening a new one');
      expect(log.warnings().map((record) => record.msg).filter((message) => message.startsWith('lost'))).toEqual([]);
    });
  });
});
