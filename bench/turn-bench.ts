/**
 * Issue #13's benchmark: the whole service against a plain `openai` SDK loop doing the same
 * model calls and file reads, on every Node the bench has (see node-runtimes.ts). A turn is
 * three model calls with four parallel read_file calls in each of the first two rounds; the
 * service streams it as SSE or answers it as JSON. The service runs as users run it: every
 * event stored (SQLite), deltas coalesced, per-agent leases, metrics on. The service and the
 * plain loop run in their own processes, so each one's CPU time is read from /proc around
 * the measured runs; the fake provider and the client run here and are not counted.
 *
 * BENCH_TURNS turns per run (default 200) after a warm-up of BENCH_WARMUP turns (default
 * 1,500, half SSE and half JSON), BENCH_REPS runs (default 3) of each, medians printed; service
 * and plain runs alternate so drift hits both alike. The warm-up is long because the service
 * has far more code than the plain loop for V8 to optimise: its CPU per turn falls by about a
 * third over its first 1,500 turns (background compilation), then stays. The warm-up's own
 * CPU per turn is printed too.
 *
 * BENCH_CONCURRENCIES (default `1,16`) and BENCH_PROTOCOLS (default `sse,json`) pick the cells;
 * BENCH_RESULTS=<file.json> also writes every cell's figures there, which
 * `bench/turn-bench-chart.ts` draws (docs/turn-bench-cpu.svg).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../test/support/fake-responses-provider.js';
import { BENCH_FILES, benchFileText, MODEL_CALLS_PER_TURN, READS_PER_ROUND, benchStep, median, processCpuMs, runConcurrently, spawnNode, spawnService, waitForHealth } from './bench-support.js';
import { benchRuntimes, type NodeRuntime } from './node-runtimes.js';

const TURNS = Number(process.env['BENCH_TURNS'] ?? 200);
const REPS = Number(process.env['BENCH_REPS'] ?? 3);
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 1_500);
const CONCURRENCIES = listSetting('BENCH_CONCURRENCIES', '1,16').map((value) => {
  const concurrency = Number(value);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) throw new Error(`BENCH_CONCURRENCIES: ${value} is not a concurrency from 1 to 256`);
  return concurrency;
});
const ALL_PROTOCOLS = ['sse', 'json'] as const;
type Protocol = (typeof ALL_PROTOCOLS)[number];
const PROTOCOLS: readonly Protocol[] = listSetting('BENCH_PROTOCOLS', 'sse,json').map((value) => {
  const protocol = ALL_PROTOCOLS.find((known) => known === value);
  if (protocol === undefined) throw new Error(`BENCH_PROTOCOLS: ${value} is not one of ${ALL_PROTOCOLS.join(', ')}`);
  return protocol;
});
/** The targets of issue #13. */
const CPU_RATIO_TARGET = 1.25;
const THROUGHPUT_TARGET = 0.8;

interface Measured {
  readonly cpuMsPerTurn: number;
  readonly turnsPerSecond: number;
}

/** One cell of the bench: medians over BENCH_REPS runs, as printed and as BENCH_RESULTS holds them. */
export interface TurnBenchCell {
  readonly node: string;
  readonly protocol: Protocol;
  readonly concurrency: number;
  readonly serviceCpuMsPerTurn: number;
  readonly plainCpuMsPerTurn: number;
  readonly serviceTurnsPerSecond: number;
  readonly plainTurnsPerSecond: number;
}

/** What BENCH_RESULTS holds: the cells, and the run they come from. */
export interface TurnBenchResults {
  readonly date: string;
  readonly cpu: string;
  readonly cores: number;
  readonly turnsPerRun: number;
  readonly reps: number;
  readonly warmup: number;
  readonly cells: readonly TurnBenchCell[];
}

function listSetting(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

export async function runTurnBench(): Promise<void> {
  const runtimes = await benchRuntimes((line) => {
    console.log(line);
  });
  const provider = await startFakeResponsesProvider({ recordRequests: false });
  provider.setDefault(benchStep);
  const rows: string[] = [];
  const cells: TurnBenchCell[] = [];
  try {
    for (const runtime of runtimes) {
      const measured = await benchRuntime(runtime, provider);
      rows.push(measured.warmup, ...measured.cells.map(formatCell));
      cells.push(...measured.cells);
    }
  } finally {
    await provider.close();
  }
  const resultsFile = process.env['BENCH_RESULTS'];
  if (resultsFile !== undefined) {
    const results: TurnBenchResults = { date: new Date().toISOString(), cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, turnsPerRun: TURNS, reps: REPS, warmup: WARMUP, cells };
    await writeFile(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nwrote ${resultsFile}`);
  }
  console.log(`\nturns: ${TURNS} per run, median of ${REPS} runs; each turn ${MODEL_CALLS_PER_TURN} model calls with ${READS_PER_ROUND} parallel read_file calls per tool round`);
  console.log(`targets: service CPU ≤ ${CPU_RATIO_TARGET}× the plain loop's; at C = 16, service turns/s ≥ ${THROUGHPUT_TARGET}× the plain loop's`);
  console.log('node          | protocol | C  | service CPU ms/turn | plain CPU ms/turn | CPU ratio | service turns/s | plain turns/s | throughput ratio');
  for (const row of rows.filter((row) => !row.startsWith('warm-up'))) console.log(row);
  for (const row of rows.filter((row) => row.startsWith('warm-up'))) console.log(row);
}

async function benchRuntime(runtime: NodeRuntime, provider: FakeResponsesProvider): Promise<{ readonly warmup: string; readonly cells: TurnBenchCell[] }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-bench-'));
  const agents = Math.max(...CONCURRENCIES);
  for (let slot = 0; slot < agents; slot += 1) {
    const home = path.join(dataDir, 'agents', `bench-${slot}`, 'home');
    await mkdir(home, { recursive: true });
    for (const [index, file] of BENCH_FILES.entries()) {
      await writeFile(path.join(home, file), await benchFileText(index));
    }
  }
  const { service, baseUrl } = await spawnService({ dataDir, providerUrl: provider.baseUrl, nodeArgs: profileArgs(runtime, 'service'), runtime });
  let plain: ChildProcess | undefined;
  try {
    await waitForHealth(baseUrl);
    const bodies = Array.from({ length: agents }, (_, slot) => JSON.stringify({ agent: { id: `bench-${slot}`, tools: { computer: true } }, input: 'Read the four files twice.', model: { name: 'gpt-5.1' } }));
    let lastTurnId = '';
    const serviceTurn = (protocol: Protocol) => async (_index: number, slot: number): Promise<void> => {
      const response = await fetch(`${baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: protocol === 'sse' ? 'text/event-stream' : 'application/json' },
        body: bodies[slot] ?? '',
      });
      const text = await response.text();
      const completed = protocol === 'sse' ? text.includes('event: turn.completed') : text.includes('"status":"completed"');
      if (!completed) throw new Error(`a benchmark turn did not complete:\n${text.slice(-500)}`);
      lastTurnId = response.headers.get('turn-id') ?? lastTurnId;
    };
    const measure = async (pid: number, turns: number, work: () => Promise<void>): Promise<Measured> => {
      const cpu0 = await processCpuMs(pid);
      const start = performance.now();
      await work();
      const seconds = (performance.now() - start) / 1000;
      return { cpuMsPerTurn: ((await processCpuMs(pid)) - cpu0) / turns, turnsPerSecond: turns / seconds };
    };
    const half = Math.ceil(WARMUP / 2);
    const serviceWarmup = await measure(service.pid!, 2 * half, async () => {
      await runConcurrently(half, 4, serviceTurn('sse'));
      await runConcurrently(half, 4, serviceTurn('json'));
    });

    // The plain loop gets exactly the tool definitions the service sent the model.
    const toolsFile = path.join(dataDir, 'provider-tools.json');
    const tools = (await (await fetch(`${baseUrl}/turns/${lastTurnId}/tools`)).json()) as { providerTools: unknown[] };
    await writeFile(toolsFile, JSON.stringify(tools.providerTools));
    plain = spawnNode('bench/plain-loop.ts', [provider.baseUrl, path.join(dataDir, 'agents', 'bench-0', 'home'), toolsFile], {}, profileArgs(runtime, 'plain'), runtime);
    const lines = createInterface({ input: plain.stdout! })[Symbol.asyncIterator]();
    const plainProcess = plain;
    const plainRun = async (count: number, concurrency: number): Promise<void> => {
      plainProcess.stdin!.write(`go ${count} ${concurrency}\n`);
      const answer = await lines.next();
      if (answer.value !== 'done') throw new Error('the plain loop failed');
    };
    const plainWarmup = await measure(plainProcess.pid!, 2 * half, () => plainRun(2 * half, 4));
    const warmup = `warm-up, ${runtime.label}: the first ${2 * half} turns (C = 4, SSE and JSON) cost the service ${serviceWarmup.cpuMsPerTurn.toFixed(2)} ms CPU per turn, the plain loop ${plainWarmup.cpuMsPerTurn.toFixed(2)} (${(serviceWarmup.cpuMsPerTurn / plainWarmup.cpuMsPerTurn).toFixed(2)}×)`;
    const cells: TurnBenchCell[] = [];
    for (const protocol of PROTOCOLS) {
      for (const concurrency of CONCURRENCIES) {
        const services: Measured[] = [];
        const plains: Measured[] = [];
        for (let rep = 0; rep < REPS; rep += 1) {
          services.push(await measure(service.pid!, TURNS, () => runConcurrently(TURNS, concurrency, serviceTurn(protocol))));
          plains.push(await measure(plainProcess.pid!, TURNS, () => plainRun(TURNS, concurrency)));
        }
        cells.push({
          node: runtime.label,
          protocol,
          concurrency,
          serviceCpuMsPerTurn: median(services.map((entry) => entry.cpuMsPerTurn)),
          plainCpuMsPerTurn: median(plains.map((entry) => entry.cpuMsPerTurn)),
          serviceTurnsPerSecond: median(services.map((entry) => entry.turnsPerSecond)),
          plainTurnsPerSecond: median(plains.map((entry) => entry.turnsPerSecond)),
        });
      }
    }
    return { warmup, cells };
  } finally {
    plain?.stdin?.write('exit\n');
    service.kill('SIGTERM');
    if (service.exitCode === null && service.signalCode === null) await once(service, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  }
}

function formatCell(cell: TurnBenchCell): string {
  const ratio = cell.serviceCpuMsPerTurn / cell.plainCpuMsPerTurn;
  const throughput = cell.serviceTurnsPerSecond / cell.plainTurnsPerSecond;
  return [
    cell.node.padEnd(13),
    cell.protocol.padEnd(8),
    String(cell.concurrency).padStart(2),
    cell.serviceCpuMsPerTurn.toFixed(2).padStart(19),
    cell.plainCpuMsPerTurn.toFixed(2).padStart(17),
    `${ratio.toFixed(2)}×${ratio <= CPU_RATIO_TARGET ? '' : ' ✗'}`.padStart(9),
    cell.serviceTurnsPerSecond.toFixed(1).padStart(15),
    cell.plainTurnsPerSecond.toFixed(1).padStart(13),
    `${throughput.toFixed(2)}×${cell.concurrency === 16 && throughput < THROUGHPUT_TARGET ? ' ✗' : ''}`.padStart(16),
  ].join(' | ');
}

/** `--cpu-prof` into BENCH_PROFILE/<node>-<name>/ when BENCH_PROFILE is set. */
function profileArgs(runtime: NodeRuntime, name: string): string[] {
  const folder = process.env['BENCH_PROFILE'];
  const label = runtime.label.replace(/\W+/g, '-').toLowerCase();
  return folder === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.join(folder, `${label}-${name}`)}`];
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) await runTurnBench();
