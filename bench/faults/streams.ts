/**
 * Fault scenario: streams and the store (issue 8, items 2, 3 and 6). Starts the service as its
 * own process on a fake Responses provider and prints:
 *   - a 200 KB answer in 7-character deltas: events streamed vs stored, rows, replay exactness;
 *   - clients that leave before the first byte: how many of N turns were cancelled as
 *     `client_disconnected`, and whether their slots were freed;
 *   - the service's RSS while consumers of a large turn stall, against a normal reader.
 */
import { existsSync } from 'node:fs';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeResponsesProvider } from '../../test/support/fake-responses-provider.js';
import { eventsOf, openStream } from '../../test/support/sse-client.js';
import { freePort, spawnNode, waitForHealth } from '../bench-support.js';

const DISCONNECTS = 100;
const BIG_TURN_DELTAS = 8_000;
const BIG_DELTA_CHARS = 1_000;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

const provider = await startFakeResponsesProvider({ recordRequests: false });
const dataDir = await mkdtemp(path.join(tmpdir(), 'faults-streams-'));
const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
const server = existsSync('dist/src/server.js') ? 'dist/src/server.js' : 'src/server.ts';
const service = spawnNode(server, [], {
  DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent', OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-faults',
  MODEL_MAX_RETRIES: '0', MAX_CONCURRENT_TURNS: String(DISCONNECTS + 10),
});
const pid = service.pid ?? 0;
try {
  await waitForHealth(baseUrl);

  // 1. A 200 KB answer in 7-character deltas.
  const deltas = Array.from({ length: 28_572 }, (_, index) => String(index % 10).repeat(7));
  provider.enqueue({ text: deltas });
  const stream = await openStream({ url: `${baseUrl}/turns`, body: { agent: { id: 'long' }, input: 'x', model: { name: 'gpt-5.1' } } });
  await stream.ended;
  const turnId = String(stream.response.headers['turn-id']);
  const streamed = eventsOf(stream);
  const stored = (await json(await fetch(`${baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } })))['events'] as unknown[];
  const replay = await openStream({ url: `${baseUrl}/turns/${turnId}/events`, method: 'GET', headers: { 'last-event-id': '100' } });
  await replay.ended;
  const text = streamed.filter((event) => event['type'] === 'message.delta').map((event) => String(event['delta'])).join('');
  console.log(`200 KB answer in ${deltas.length} deltas of 7 chars: streamed ${streamed.length} events, stored ${stored.length}, identical: ${JSON.stringify(stored) === JSON.stringify(streamed)}, text intact: ${text === deltas.join('')}, replay after 100 exact: ${JSON.stringify(eventsOf(replay)) === JSON.stringify(stored.slice(100))}`);

  // 2. Clients that leave before the first byte.
  const body = JSON.stringify({ agent: { id: 'vanish' }, input: 'x', model: { script: [{ text: 'for nobody', delayMs: 30_000 }] } });
  await Promise.all(
    Array.from({ length: DISCONNECTS }, () =>
      new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.end(`POST /turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => {
            socket.destroy();
            resolve();
          });
        });
        socket.on('error', () => {
          resolve();
        });
      }),
    ),
  );
  const started = performance.now();
  let running = -1;
  while (performance.now() - started < 10_000) {
    running = Number((await json(await fetch(`${baseUrl}/readyz`)))['runningTurns']);
    if (running === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  const database = new BetterSqlite3(path.join(dataDir, 'turns.sqlite'), { readonly: true });
  const counts = database
    .prepare(`select count(*) as total, sum(case when status = 'cancelled' and error_json like '%client_disconnected%' then 1 else 0 end) as detected from turns where agent_id = 'vanish'`)
    .get() as { total: number; detected: number };
  database.close();
  console.log(`disconnect before the first byte, ${DISCONNECTS} clients: ${counts.total} turns were created (the rest were dropped before any turn existed), ${counts.detected} of ${counts.total} cancelled as client_disconnected, turns still running after: ${running}, settled in ${Math.round(performance.now() - started)} ms`);

  // 3. RSS while consumers stall on a large turn, against one normal reader.
  const bigTurn = async (stall: boolean): Promise<{ baseline: number; peak: number; after: number; megabytes: number }> => {
    const baseline = await rssMiB(pid);
    provider.enqueue({ text: Array.from({ length: BIG_TURN_DELTAS }, (_, index) => String(index % 10).repeat(BIG_DELTA_CHARS)) });
    const owner = await openStream({ url: `${baseUrl}/turns`, body: { agent: { id: stall ? 'stalled' : 'reader' }, input: 'x', model: { name: 'gpt-5.1' } } });
    const id = String(owner.response.headers['turn-id']);
    const tails = stall ? await Promise.all([1, 2].map(() => openStream({ url: `${baseUrl}/turns/${id}/events`, method: 'GET' }))) : [];
    if (stall) for (const consumer of [owner, ...tails]) consumer.response.pause();
    let peak = baseline;
    for (;;) {
      peak = Math.max(peak, await rssMiB(pid));
      if ((await json(await fetch(`${baseUrl}/turns/${id}`)))['status'] !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (let sample = 0; sample < 10; sample += 1) {
      peak = Math.max(peak, await rssMiB(pid));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const consumer of [owner, ...tails]) consumer.response.resume();
    await Promise.all([owner.ended, ...tails.map((tail) => tail.ended)]);
    for (const consumer of [owner, ...tails]) consumer.messages.length = 0;
    return { baseline, peak, after: await rssMiB(pid), megabytes: (BIG_TURN_DELTAS * BIG_DELTA_CHARS) / 1e6 };
  };
  // Stalled first: the first large turn also grows the heap, which V8 keeps afterwards.
  const stalled = await bigTurn(true);
  const normal = await bigTurn(false);
  const show = (figures: { baseline: number; peak: number; after: number }) =>
    `RSS ${figures.baseline.toFixed(0)} MiB before, peak ${figures.peak.toFixed(0)} MiB (+${(figures.peak - figures.baseline).toFixed(0)}), ${figures.after.toFixed(0)} MiB after`;
  console.log(`a ${normal.megabytes} MB turn, one reader keeping up: ${show(normal)}`);
  console.log(`a ${stalled.megabytes} MB turn, 3 consumers stalled for the whole turn (then resumed, all served): ${show(stalled)}`);
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  await provider.close();
  await rm(dataDir, { recursive: true, force: true });
}
