/**
 * Issue #2's benchmark: the service against a plain `openai` SDK loop doing the same work.
 * Each turn is three model calls with four parallel read_file calls per round, streamed to
 * the client as SSE. The service and the plain loop run in their own processes, so each
 * one's CPU time is read from /proc around the measured runs; the fake provider and the
 * client run here and are not counted.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startFakeResponsesProvider } from '../test/support/fake-responses-provider.js';
import { BENCH_FILES, MODEL_CALLS_PER_TURN, READS_PER_ROUND, benchStep, freePort, percentile, processCpuMs, runConcurrently, spawnNode, waitForHealth } from './bench-support.js';

const TURNS = Number(process.env['BENCH_TURNS'] ?? 300);
const WARMUP = 40;
const CONCURRENCIES = [1, 16];

export async function runTurnBench(): Promise<void> {
  const provider = await startFakeResponsesProvider({ recordRequests: false });
  provider.setDefault(benchStep);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-bench-'));
  const home = path.join(dataDir, 'agents', 'bench', 'home');
  await mkdir(home, { recursive: true });
  for (const [index, file] of BENCH_FILES.entries()) {
    await writeFile(path.join(home, file), `# ${file}\n\n${'Benchmark notes, line after line.\n'.repeat(100 + index)}`);
  }
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // The compiled service, as production runs it (`npm run bench` builds first).
  const service = spawnNode('dist/src/server.js', [], {
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    OPENAI_BASE_URL: provider.baseUrl,
    OPENAI_API_KEY: 'sk-bench',
    MODEL_MAX_RETRIES: '0',
    MAX_CONCURRENT_TURNS: '1000',
  }, process.env['BENCH_PROFILE'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`]);
  const plainLines = { next: (): Promise<string> => Promise.reject(new Error('not started')) };
  let plain: ReturnType<typeof spawnNode> | undefined;
  try {
    await waitForHealth(baseUrl);
    const body = JSON.stringify({ agent: { id: 'bench', tools: { computer: true } }, input: 'Read the four files twice.', model: { name: 'gpt-5.1' } });
    let lastTurnId = '';
    const runTurn = async (): Promise<void> => {
      const response = await fetch(`${baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body });
      const text = await response.text();
      if (!text.includes('event: turn.completed')) throw new Error(`a benchmark turn did not complete:\n${text.slice(-500)}`);
      lastTurnId = response.headers.get('turn-id') ?? '';
    };
    await runConcurrently(WARMUP, 4, runTurn);
    const toolsFile = path.join(dataDir, 'provider-tools.json');
    const tools = (await (await fetch(`${baseUrl}/turns/${lastTurnId}/tools`)).json()) as { providerTools: unknown[] };
    await writeFile(toolsFile, JSON.stringify(tools.providerTools));

    plain = spawnNode('bench/plain-loop.ts', [provider.baseUrl, home, toolsFile], {});
    const reader = createInterface({ input: plain.stdout! })[Symbol.asyncIterator]();
    plainLines.next = async () => String((await reader.next()).value);
    const plainRun = async (count: number, concurrency: number): Promise<void> => {
      plain!.stdin!.write(`go ${count} ${concurrency}\n`);
      if ((await plainLines.next()) !== 'done') throw new Error('the plain loop failed');
    };
    await plainRun(WARMUP, 4);

    console.log(`\nturns: ${TURNS} per run, each ${MODEL_CALLS_PER_TURN} model calls with ${READS_PER_ROUND} parallel read_file calls per round, streamed as SSE`);
    console.log('concurrency | service turns/s | service CPU ms/turn | plain loop turns/s | plain CPU ms/turn | CPU ratio');
    for (const concurrency of CONCURRENCIES) {
      const serviceCpu0 = await processCpuMs(service.pid!);
      const serviceStart = performance.now();
      await runConcurrently(TURNS, concurrency, runTurn);
      const serviceSeconds = (performance.now() - serviceStart) / 1000;
      const serviceCpu = ((await processCpuMs(service.pid!)) - serviceCpu0) / TURNS;

      const plainCpu0 = await processCpuMs(plain.pid!);
      const plainStart = performance.now();
      await plainRun(TURNS, concurrency);
      const plainSeconds = (performance.now() - plainStart) / 1000;
      const plainCpu = ((await processCpuMs(plain.pid!)) - plainCpu0) / TURNS;
      console.log(
        `${String(concurrency).padStart(11)} | ${(TURNS / serviceSeconds).toFixed(1).padStart(15)} | ${serviceCpu.toFixed(2).padStart(19)} | ${(TURNS / plainSeconds).toFixed(1).padStart(18)} | ${plainCpu.toFixed(2).padStart(17)} | ${(serviceCpu / plainCpu).toFixed(2)}×`,
      );
    }

    const latencies: number[] = [];
    for (let sample = 0; sample < 20; sample += 1) latencies.push(await measureAbortLatency(baseUrl));
    console.log(`abort on disconnect: turn.cancelled stored ${percentile(latencies, 0.5)} ms (p50) / ${percentile(latencies, 0.95)} ms (p95) after the client vanished`);
  } finally {
    plain?.stdin?.write('exit\n');
    service.kill('SIGTERM');
    await once(service, 'exit');
    await provider.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Starts a turn whose model is slow, vanishes, and reads how soon the turn was stored cancelled. */
async function measureAbortLatency(baseUrl: string): Promise<number> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agent: { id: 'abort' }, input: 'x', model: { script: [{ delayMs: 30_000 }] } }),
    signal: controller.signal,
  });
  const turnId = response.headers.get('turn-id') ?? '';
  const reader = response.body!.getReader();
  await reader.read();
  const vanished = Date.now();
  controller.abort();
  for (;;) {
    const events = (await (await fetch(`${baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } })).json()) as { events: { type: string; at: string }[] };
    const last = events.events.at(-1);
    if (last?.type === 'turn.cancelled') return Date.parse(last.at) - vanished;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) await runTurnBench();
