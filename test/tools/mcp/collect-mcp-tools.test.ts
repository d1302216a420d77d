import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectMcpTools } from '../../../src/tools/mcp/collect-mcp-tools.js';
import { ServiceError } from '../../../src/service-error.js';
import { stdioTestServer } from '../../support/mcp-test-server.js';
import { createTestRegistry, eventsFolder, noAbort } from './mcp-test-kit.js';

let files: Awaited<ReturnType<typeof eventsFolder>>;

beforeAll(async () => {
  files = await eventsFolder();
});
afterAll(async () => {
  await files.remove();
});

/** A stdio "server" that notes each start in `file`, then exits at once. */
function crashingServer(file: string) {
  return {
    transport: 'stdio' as const,
    command: process.execPath,
    args: ['-e', `require('node:fs').appendFileSync(${JSON.stringify(file)}, 'start\\n'); process.stderr.write('fatal: no database\\n'); process.exit(1)`],
    env: {},
  };
}

describe('collectMcpTools (the MCP part of turn assembly)', () => {
  it('refuses server names that are not configured, with the index of each, before contacting any server', async () => {
    const starts = path.join(files.folder, 'refused-starts.log');
    const harness = createTestRegistry({ acme: crashingServer(starts) });
    const error: unknown = await collectMcpTools({ names: ['acme', 'nope', '__proto__'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({
      statusCode: 400,
      code: 'invalid_request',
      issues: [
        { path: ['agent', 'tools', 'mcp', 1], message: 'no MCP server named "nope" is configured' },
        { path: ['agent', 'tools', 'mcp', 2], message: 'no MCP server named "__proto__" is configured' },
      ],
    });
    expect(await countLines(starts)).toBe(0);
    await harness.registry.close();
  });

  it('leaves out a server whose command does not exist: one unavailable entry, one warning', async () => {
    const harness = createTestRegistry({ missing: { transport: 'stdio', command: '/nonexistent/mcp-server', args: [], env: {} } });
    const outcome = await collectMcpTools({ names: ['missing'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger });
    expect(outcome).toEqual({ tools: [], unavailable: [{ source: 'mcp:missing', reason: 'the server command was not found' }] });
    expect(harness.log.warnings()).toHaveLength(1);
    expect(harness.log.warnings()[0]?.msg).toBe('MCP server "missing" is unavailable for this turn: the server command was not found');
    await harness.registry.close();
  });

  it('does not start a crashing server again before its backoff, which doubles', async () => {
    const startsFile = path.join(files.folder, 'starts.log');
    const harness = createTestRegistry({ flaky: crashingServer(startsFile) });
    const starts = () => countLines(startsFile);
    const collect = () => collectMcpTools({ names: ['flaky'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger });

    expect((await collect()).unavailable).toEqual([{ source: 'mcp:flaky', reason: 'the server closed the connection' }]);
    expect(await starts()).toBe(1);
    const debug = harness.log.records.find((record) => record.msg.startsWith('could not connect to the MCP server'));
    expect(debug?.['stderr']).toBe('fatal: no database');

    expect((await collect()).unavailable[0]?.reason).toBe('the server closed the connection; next attempt in 1 s');
    expect(await starts()).toBe(1);

    harness.clock.advance(1_000);
    await collect();
    expect(await starts()).toBe(2);

    harness.clock.advance(1_000);
    expect((await collect()).unavailable[0]?.reason).toBe('the server closed the connection; next attempt in 1 s');
    expect(await starts()).toBe(2);
    harness.clock.advance(1_000);
    await collect();
    expect(await starts()).toBe(3);
    expect(harness.log.warnings()).toHaveLength(5);
    await harness.registry.close();
  });

  it('leaves out a server slower than the assembly signal, and keeps connecting for later turns', async () => {
    const harness = createTestRegistry({ acme: stdioTestServer() });
    const controller = new AbortController();
    const pending = collectMcpTools({ names: ['acme'], agentId: 'a1', registry: harness.registry, signal: controller.signal, logger: harness.log.logger });
    controller.abort();
    expect(await pending).toEqual({ tools: [], unavailable: [{ source: 'mcp:acme', reason: 'the server did not answer in time' }] });
    const later = await collectMcpTools({ names: ['acme'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger });
    expect(later.unavailable).toEqual([]);
    expect(later.tools.map((tool) => tool.name)).toContain('lookup');
    await harness.registry.close();
  });

  it('takes each server once, in the order the agent named them, when one is down', async () => {
    const harness = createTestRegistry({ acme: stdioTestServer(), missing: { transport: 'stdio', command: '/nonexistent/mcp', args: [], env: {} } });
    const outcome = await collectMcpTools({ names: ['missing', 'acme', 'acme'], agentId: 'a1', registry: harness.registry, signal: noAbort, logger: harness.log.logger });
    expect(new Set(outcome.tools.map((tool) => tool.namespace))).toEqual(new Set(['acme']));
    expect(outcome.tools.filter((tool) => tool.name === 'lookup')).toHaveLength(1);
    expect(outcome.unavailable).toEqual([{ source: 'mcp:missing', reason: 'the server command was not found' }]);
    await harness.registry.close();
  });
});

async function countLines(file: string): Promise<number> {
  try {
    return (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '').length;
  } catch {
    return 0;
  }
}
