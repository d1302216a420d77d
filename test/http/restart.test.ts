import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime } from '../support/test-runtime.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function waitForHealth(baseUrl: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error('the server did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a process that dies mid-turn', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('leaves the turn interrupted, with a terminal event, once the service starts again', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-restart-'));
    folders.push(dataDir);
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent', INSTANCE_ID: 'restart-test' },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitForHealth(`http://127.0.0.1:${port}`, 20_000);
      const stream = await openStream({
        url: `http://127.0.0.1:${port}/turns`,
        body: { agent: { id: 'doomed' }, input: 'wait', model: { script: [{ text: 'never', delayMs: 60_000 }] } },
      });
      await stream.waitFor((message) => message.event === 'turn.started');
      const turnId = String(stream.response.headers['turn-id']);
      child.kill('SIGKILL');
      await exited;
      stream.destroy();

      const runtime = await startTestRuntime({ dataDir, env: { INSTANCE_ID: 'restart-test' } });
      try {
        const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`));
        expect(record).toMatchObject({ id: turnId, status: 'interrupted', error: { code: 'interrupted' } });
        expect(record.finishedAt).not.toBeNull();
        const events = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } }));
        expect(events.events.map((event: { type: string }) => event.type)).toEqual(['turn.started', 'turn.failed']);
        expect(events.events.at(-1)).toMatchObject({ seq: 2, error: { code: 'interrupted' } });
      } finally {
        await runtime.close({ keepData: true });
      }
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
