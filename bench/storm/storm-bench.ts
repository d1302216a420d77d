/**
 * `npm run bench:storm`: the disconnect storm (storm.ts) against the compiled service on its
 * embedded defaults (SQLite, the bubblewrap sandbox), in its own process. BENCH_STORM_TURNS
 * turns (600) in waves of BENCH_STORM_WAVE (50); a first wave warms the service up and is not
 * counted. Prints, from the client's leaving: the turn's end stored, its processes gone, and
 * the later of the two (target p95 ≤ 100 ms), with p50/p95/p99/max; the turns or processes
 * that ran on; the per-call outcomes recorded; the service's RSS after a full garbage
 * collection before and after the waves (target: back within 10 MiB). Exits non-zero when a
 * turn or process ran on. With BENCH_STORM_PROFILE=<file.cpuprofile>, a CPU profile of the
 * service during the waves is written there (bench/summarize-profile.ts reads it).
 *
 * Run it under the machine's guard: ../shared/tools/bounded --mem 8G --pids 4096 --time 900 -- npm run bench:storm
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, percentile, spawnService, waitForHealth } from '../bench-support.js';
import { collectGarbage, profiled, rssKb } from '../service-inspector.js';
import { runStorm, type StormTurn } from './storm.js';

const TURNS = Number(process.env['BENCH_STORM_TURNS'] ?? 600);
const WAVE = Number(process.env['BENCH_STORM_WAVE'] ?? 50);
const SEED = Number(process.env['BENCH_STORM_SEED'] ?? 20261206);
/** A wave's turns start this many ms apart; 0 starts them all at once (see StormOptions.staggerMs). */
const STAGGER_MS = Number(process.env['BENCH_STORM_STAGGER_MS'] ?? 20);
const PROFILE = process.env['BENCH_STORM_PROFILE'];
/** A file to write every turn's figures to, as JSON, for a closer look. */
const DUMP = process.env['BENCH_STORM_DUMP'];
const TARGET_P95_MS = 100;
const RSS_TARGET_KB = 10 * 1024;
/**
 * Idle time before each memory reading (then a full garbage collection): longer than the
 * launcher thread's idle life (10 s), so that both readings are of the service without it.
 */
const SETTLE_MS = 12_000;

const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-storm-'));
// mkdtemp makes it 0700; the sandbox user that runs commands must pass through it to the homes.
await chmod(dataDir, 0o711);
const inspectPort = await freePort();
const { service, baseUrl } = await spawnService({
  dataDir,
  env: { MAX_CONCURRENT_TURNS: String(2 * WAVE) },
  nodeArgs: [`--inspect-port=127.0.0.1:${String(inspectPort)}`],
});
service.stdout?.resume();
try {
  await waitForHealth(baseUrl);
  const pid = service.pid!;
  const storm = (turns: number, seed: number, onWave?: (wave: number, results: readonly StormTurn[]) => void) =>
    runStorm({ baseUrl, dataDir, turns, wave: WAVE, seed, staggerMs: STAGGER_MS, ...(onWave === undefined ? {} : { onWave }) });
  await storm(WAVE, SEED + 1);
  const settledRss = async (): Promise<number> => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await collectGarbage(pid, inspectPort);
    return rssKb(pid);
  };
  const startKb = await settledRss();
  let peakKb = startKb;
  const sampler = setInterval(() => {
    void rssKb(pid).then((kb) => {
      peakKb = Math.max(peakKb, kb);
    });
  }, 200);
  const began = performance.now();
  const turns = await profiled(pid, inspectPort, PROFILE, () =>
    storm(TURNS, SEED, (wave, results) => {
      const ends = results.flatMap((turn) => (turn.endMs === undefined ? [] : [turn.endMs]));
      console.log(`  wave ${String(wave + 1)}: ${String(results.length)} turns, end p50 ${fmt(percentile(ends, 0.5))} p95 ${fmt(percentile(ends, 0.95))} max ${fmt(Math.max(...ends))} ms`);
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  if (DUMP !== undefined) await writeFile(DUMP, JSON.stringify(turns, null, 1));
  clearInterval(sampler);
  const endKb = await settledRss();

  const left = turns.filter((turn) => turn.leftAt !== undefined);
  const figures = (pick: (turn: StormTurn) => number | undefined) => {
    const values = left.flatMap((turn) => {
      const value = pick(turn);
      return value === undefined ? [] : [value];
    });
    return `p50 ${fmt(percentile(values, 0.5))}  p95 ${fmt(percentile(values, 0.95))}  p99 ${fmt(percentile(values, 0.99))}  max ${fmt(Math.max(...values))} ms`;
  };
  const ends = left.flatMap((turn) => (turn.endMs === undefined ? [] : [turn.endMs]));
  const p95 = percentile(ends, 0.95);
  const ranOn = turns.filter((turn) => turn.ranOn);
  const outcomes = new Map<string, number>();
  for (const outcome of turns.flatMap((turn) => turn.outcomes)) outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const byShape = [...new Set(turns.map((turn) => turn.shape))].map((shape) => {
    const values = left.filter((turn) => turn.shape === shape && turn.endMs !== undefined).map((turn) => turn.endMs ?? 0);
    return `${shape} p95 ${fmt(percentile(values, 0.95))}`;
  });
  console.log(`\ndisconnect storm: ${String(turns.length)} turns in waves of ${String(WAVE)} (started ${STAGGER_MS > 0 ? `${String(STAGGER_MS)} ms apart` : 'all at once'}), ${seconds.toFixed(0)} s, seed ${String(SEED)}`);
  console.log(`  clients that left: ${String(left.length)}; turns that ended before their client left: ${String(turns.filter((turn) => turn.leftAt === undefined && turn.error === undefined).length)}; request errors: ${String(turns.filter((turn) => turn.error !== undefined).length)}`);
  console.log(`  client left → turn end stored:   ${figures((turn) => turn.storedMs)}`);
  console.log(`  client left → processes gone:    ${figures((turn) => turn.processesGoneMs)}`);
  console.log(`  client left → both (the target): ${figures((turn) => turn.endMs)}   (target p95 ≤ ${String(TARGET_P95_MS)} ms${p95 <= TARGET_P95_MS ? '' : ' ✗'})`);
  console.log(`    by shape: ${byShape.join(', ')}`);
  console.log(`  turns or processes that ran on: ${String(ranOn.length)}${ranOn.length === 0 ? '' : ` ✗ (${ranOn.slice(0, 5).map((turn) => `${turn.label} ${turn.status ?? '?'}`).join(', ')})`}`);
  console.log(`  per-call outcomes of tool.failed: ${[...outcomes].map(([outcome, count]) => `${outcome} ${String(count)}`).join(', ')}`);
  console.log(`  service RSS after a full GC: ${mib(startKb)} MiB before the waves, ${mib(endKb)} MiB after (${signed(endKb - startKb)} MiB, target within 10 MiB${Math.abs(endKb - startKb) <= RSS_TARGET_KB ? '' : ' ✗'}), peak ${mib(peakKb)} MiB`);
  process.exitCode = ranOn.length === 0 ? 0 : 1;
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await rm(dataDir, { recursive: true, force: true });
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? ms.toFixed(0) : '–';
}

function mib(kb: number): string {
  return (kb / 1024).toFixed(1);
}

function signed(kb: number): string {
  return `${kb >= 0 ? '+' : '−'}${mib(Math.abs(kb))}`;
}
