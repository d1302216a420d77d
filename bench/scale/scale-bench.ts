/**
 * Issue #13's scale benchmark (`npm run bench:scale`): three compiled service processes on one
 * local PostgreSQL behind a round-robin client, running the bench's turn mix (three model calls,
 * four parallel read_file calls per round, streamed as SSE) at rising concurrency. The fake model
 * waits BENCH_SCALE_MODEL_MS before each answer, so turns are long and mostly waiting.
 *
 * It measures what a turn costs (events, statements, commits, rows, WAL, NOTIFYs, CPU of every
 * process, memory while waiting), builds a capacity model from the lowest step, prints the model's
 * prediction beside the measurement for every step, and extrapolates to 1,000 and 10,000
 * concurrent turns with a real model's latency. docs/capacity.md explains the figures.
 *
 * Replica 0 reaches PostgreSQL through a counting proxy (pg-wire-proxy.ts, its own process) that
 * counts statements, commits, wire bytes and NOTIFYs; the others connect directly.
 *
 * Settings (environment), defaults in brackets: BENCH_SCALE_CONCURRENCY (8,32,128,512),
 * BENCH_SCALE_TURNS (turns per step, one number or a list; max(120, 2 × C)), BENCH_SCALE_MODEL_MS
 * (200), BENCH_SCALE_REAL_MODEL_MS (2000, for the extrapolation), BENCH_SCALE_WAITING (300 turns
 * for the memory probe), BENCH_SCALE_SETTLE_MS (10500), BENCH_SCALE_REPLICAS (3),
 * BENCH_SCALE_PROXY_ALL (0), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import { startFakeResponsesProvider, type FakeRequest, type FakeStep } from '../../test/support/fake-responses-provider.js';
import { benchStep, runConcurrently } from '../bench-support.js';
import type { ServerProbes, StepResult } from './capacity-model.js';
import { createBenchDatabase, PgMonitor, probeCommits, probeWalThroughput } from './pg-monitor.js';
import { measureBackground, measureWaitingMemory, Measurer, runStep, type ModelHold } from './scale-measure.js';
import { startProxy, startReplica, turnBody, type Cleanups, type Replica } from './scale-processes.js';
import { printReport } from './scale-report.js';
import { pause, postTurn, readSettings } from './scale-support.js';

const settings = readSettings(process.env);
const WARMUP_TURNS = 90;
const WARMUP_CONCURRENCY = 12;
const BASELINE_MS = 8_000;
/** BENCH_SCALE_PROXY_ALL=1: every replica behind the counting proxy (checks that replica 0 is typical). */
const PROXY_ALL = process.env['BENCH_SCALE_PROXY_ALL'] === '1';

const cleanups: Cleanups = [];
let phaseStarted = performance.now();
/** Progress on stderr, so stdout is the report alone. */
const phase = (name: string): void => {
  console.error(`  ${name}: ${((performance.now() - phaseStarted) / 1_000).toFixed(1)} s`);
  phaseStarted = performance.now();
};
/** Runs the cleanups, last first; each once, whatever the others do. */
const cleanup = async (): Promise<void> => {
  for (let step = cleanups.pop(); step !== undefined; step = cleanups.pop()) {
    try {
      await step();
    } catch (error) {
      console.error('cleanup:', error instanceof Error ? error.message : error);
    }
  }
};
let interrupted: Promise<void> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    interrupted = cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- provider

/**
 * The fake model's answers: the bench's step, after modelMs; while `hold` is on, a turn's first
 * call waits (for the memory probe) until its client goes away.
 */
function modelSteps(hold: ModelHold): (request: FakeRequest) => FakeStep {
  return (request) => {
    const step = benchStep(request);
    if ('status' in step || 'reset' in step) return step;
    const input = Array.isArray(request.body.input) ? (request.body.input as { type?: string }[]) : [];
    if (hold.on && !input.some((item) => item.type === 'function_call_output')) {
      hold.seen += 1;
      return { ...step, headersDelayMs: 600_000 };
    }
    return { ...step, headersDelayMs: settings.modelMs };
  };
}

// ---------------------------------------------------------------- the run

async function main(): Promise<void> {
  const { concurrencies, turns: turnsPerStep, replicas: replicaCount } = settings;
  const agents = Math.max(WARMUP_CONCURRENCY, settings.waitingTurns, ...concurrencies);
  const runStarted = performance.now();

  const hold: ModelHold = { on: false, seen: 0 };
  const provider = await startFakeResponsesProvider({ recordRequests: false });
  cleanups.push(() => provider.close());
  provider.setDefault(modelSteps(hold));

  const database = await createBenchDatabase(settings.postgresUrl);
  cleanups.push(() => database.drop());
  const monitor = await PgMonitor.connect(database.url);
  cleanups.push(() => monitor.close());
  const proxy = await startProxy(settings.postgresUrl, cleanups);

  // Replica 0 talks to PostgreSQL through the counting proxy; the others directly. It starts
  // alone, so the migrations run once, then the others join.
  const start = (index: number, databaseUrl: string): Promise<Replica> => startReplica({ index, databaseUrl, providerUrl: provider.baseUrl, agents, cleanups });
  const replicas: Replica[] = [await start(0, database.urlVia(proxy.port))];
  replicas.push(...(await Promise.all(Array.from({ length: replicaCount - 1 }, (_, index) => start(index + 1, PROXY_ALL ? database.urlVia(proxy.port) : database.url)))));
  const measurer = new Measurer(replicas, proxy, monitor, () => provider.requestCount);
  phase(`start (${replicaCount} replicas, ${agents} agent homes each)`);
  const pgVersion = await monitor.setting('server_version');
  const maxConnections = Number(await monitor.setting('max_connections'));
  const fsync = `fsync=${await monitor.setting('fsync')}, synchronous_commit=${await monitor.setting('synchronous_commit')}`;

  // Warm up: JIT, pools, the agents' first turns.
  await runConcurrently(WARMUP_TURNS, WARMUP_CONCURRENCY, async (index, slot) => {
    const turn = await postTurn(replicas[index % replicaCount]!.baseUrl, turnBody(slot));
    if (turn.outcome !== 'completed') throw new Error(`a warm-up turn ended ${turn.outcome}`);
  });
  phase('warm-up');

  // Memory while waiting: N turns each parked in its first model call, RSS before and during.
  const memory = await measureWaitingMemory({ measurer, replicas, hold, count: settings.waitingTurns });
  phase('memory probe');
  await pause(settings.settleMs);

  // The idle background: what three replicas cost with no turns at all.
  const background = await measureBackground({ measurer, ms: BASELINE_MS, replicas: replicaCount, proxiedReplicas: PROXY_ALL ? replicaCount : 1 });
  phase('idle background');

  const steps: StepResult[] = [];
  for (const [index, concurrency] of concurrencies.entries()) {
    steps.push(await runStep({ measurer, replicas, concurrency, turns: turnsPerStep[index]!, background, settleMs: settings.settleMs, proxyAll: PROXY_ALL }));
  }
  phase('steps');

  // What the server itself can do, on this machine, now.
  const probes: ServerProbes = {
    plainCommitsPerSecond: (await probeCommits(database.url, { notify: false, connections: 16, ms: 2_000 })).commitsPerSecond,
    notifyCommitsPerSecond: (await probeCommits(database.url, { notify: true, connections: 16, ms: 2_000 })).commitsPerSecond,
    probeConnections: 16,
    walMBps: await probeWalThroughput(database.url, { connections: 4, ms: 2_000 }),
    walPerHeartbeatRow: await monitor.walPerHeartbeatRow(500),
    maxConnections,
  };
  phase('server probes');

  printReport({ settings, steps, background, memory, probes, pgVersion, fsync, runSeconds: (performance.now() - runStarted) / 1_000, databaseName: database.name });
}

try {
  await main();
} catch (error) {
  // Interrupted: whatever failed because its processes went away is no news.
  if (interrupted !== undefined) await interrupted;
  throw error;
} finally {
  await cleanup();
}
process.exit(0);
