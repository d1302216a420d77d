import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider } from '../support/fake-responses-provider.js';
import { openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime } from '../support/test-runtime.js';
import { waitUntil } from '../support/wait-until.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('what a turn record keeps when the turn does not end well', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('stores the text a failed turn streamed as its output', async () => {
    const provider = await startFakeResponsesProvider();
    cleanups.push(() => provider.close());
    const runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '1' } });
    cleanups.push(() => runtime.close());
    provider.enqueue({ text: ['The answer ', 'is 42, because'], end: 'failed', failure: { message: 'the model broke off', code: 'server_error' } });
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'half-said' }, input: 'x', model: { name: 'gpt-5.1' } }),
    });
    const body = await readJson(response);
    expect(body).toMatchObject({ status: 'failed', error: { code: 'model_error' }, output: 'The answer is 42, because' });
    expect(body.events.at(-1)).toMatchObject({ type: 'turn.failed', output: 'The answer is 42, because' });
    expect(await readJson(await fetch(`${runtime.baseUrl}/turns/${body.id as string}`))).toMatchObject({ output: 'The answer is 42, because' });
  });

  it('keeps the iterations and usage of a turn interrupted by the death of its process', async () => {
    const provider = await startFakeResponsesProvider();
    cleanups.push(() => provider.close());
    provider.enqueue(
      { text: 'Listing.', calls: [{ name: 'list_files', arguments: '{}' }], usage: { inputTokens: 120, outputTokens: 30 } },
      { text: 'Again.', calls: [{ name: 'list_files', arguments: '{}' }], usage: { inputTokens: 200, outputTokens: 10 } },
      { hang: true },
    );
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-progress-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: {
        PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent', INSTANCE_ID: 'progress-test',
        OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      child.kill('SIGKILL');
      await exited;
    });
    for (let attempt = 0; ; attempt += 1) {
      const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
      if (healthy) break;
      if (attempt > 400) throw new Error('the service did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const stream = await openStream({
      url: `http://127.0.0.1:${port}/turns`,
      body: { agent: { id: 'dies', tools: { computer: true } }, input: 'x', model: { name: 'gpt-5.1' } },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await provider.waitForRequest(3);
    // The third model call hangs: kill once the second round's progress is in the store (the
    // record is read from it), however long a loaded machine takes to write it.
    await waitUntil('the second round stored', async () => {
      const record = await readJson(await fetch(`http://127.0.0.1:${port}/turns/${turnId}`));
      return record.iterations === 2 && record.usage.inputTokens === 320 ? true : undefined;
    });
    child.kill('SIGKILL');
    await exited;
    stream.destroy();

    const runtime = await startTestRuntime({ dataDir, env: { INSTANCE_ID: 'progress-test' } });
    try {
      const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`));
      expect(record).toMatchObject({ status: 'interrupted', iterations: 2, usage: { inputTokens: 320, outputTokens: 40 } });
      const events = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } }));
      expect(events.events.at(-1)).toMatchObject({ type: 'turn.failed', error: { code: 'interrupted' }, iterations: 2, usage: { inputTokens: 320, outputTokens: 40 } });
    } finally {
      await runtime.close({ keepData: true });
    }
  }, 60_000);
});
