import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandProcess } from '../../src/sandbox/run-command-process.js';
import { CommandSandboxError } from '../../src/sandbox/command-sandbox.js';
import { systemClock } from '../../src/clock.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/** Issue 8, item 1: concurrent command turns once ran the process out of descriptors and crashed it. */
const CONCURRENCY = 50;
const TURNS = 300;

async function openFds(): Promise<number> {
  return (await readdir('/proc/self/fd')).length;
}

describe('many concurrent run_command turns through the HTTP API', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it(`survives ${String(CONCURRENCY)} at once for ${String(TURNS)} turns: every turn stored completed, descriptors bounded`, async () => {
    const before = await openFds();
    let peak = before;
    const sampler = setInterval(() => {
      void openFds().then((count) => {
        peak = Math.max(peak, count);
      });
    }, 20);
    const ids: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < TURNS) {
        const index = next;
        next += 1;
        const response = await fetch(`${runtime.baseUrl}/turns`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            agent: { id: `load-${String(index % CONCURRENCY)}`, tools: { computer: true } },
            input: 'run it',
            model: {
              script: [
                { calls: [{ name: 'run_command', arguments: { command: `echo turn-${String(index)} > out.txt && cat out.txt` } }] },
                { calls: [{ name: 'read_file', arguments: { path: 'out.txt' } }] },
                { text: 'done' },
              ],
            },
          }),
        });
        const body = await readJson(response);
        expect(response.status).toBe(200);
        ids.push(body.id);
      }
    };
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      clearInterval(sampler);
    }
    expect(ids).toHaveLength(TURNS);
    let completed = 0;
    let commandsRan = 0;
    for (const id of ids) {
      const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${id}`));
      if (record.status === 'completed') completed += 1;
      const events = (await (await fetch(`${runtime.baseUrl}/turns/${id}/events`, { headers: { accept: 'application/x-ndjson' } })).text())
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { type: string; name?: string; output?: string });
      if (events.some((event) => event.type === 'tool.completed' && event.name === 'run_command' && String(event.output).includes('exit code: 0'))) commandsRan += 1;
    }
    expect(completed).toBe(TURNS);
    expect(commandsRan).toBe(TURNS);
    // Each running command holds a handful of pipes; nothing grows with the process's own fd count.
    expect(peak - before).toBeLessThan(CONCURRENCY * 20);
    expect((await fetch(`${runtime.baseUrl}/healthz`)).status).toBe(200);
  }, 300_000);
});

describe('a command process that cannot be spawned', () => {
  it('rejects with a sandbox error instead of an unhandled error event', async () => {
    const failure = runCommandProcess({
      file: '/nonexistent/launcher',
      args: [],
      env: {},
      cwd: '/',
      inputs: ['data for fd 3'],
      inheritedFds: [],
      timeoutMs: 5_000,
      signal: new AbortController().signal,
      outputLimitBytes: 1024,
      cgroups: [],
      pidNamespace: false,
      clock: systemClock,
    });
    await expect(failure).rejects.toBeInstanceOf(CommandSandboxError);
    await expect(failure).rejects.toThrow(/could not start \/nonexistent\/launcher: spawn \/nonexistent\/launcher ENOENT/);
  });
});
