/**
 * The disconnect storm: waves of streaming turns, each running sandboxed commands that take
 * seconds (some spawning children, one forking in a loop, some turns with a second command
 * queued behind the first), whose clients leave at random instants. For every turn it times,
 * from outside the service, the client's leaving to
 *   - the turn's end stored (`turns.status` read from the SQLite file, polled every few ms), and
 *   - every process of the turn's commands gone (see process-watch.ts),
 * and reads the per-call outcomes the turn recorded. Shared by the bench (storm-bench.ts, 600
 * turns) and the suite (a 20-turn version asserting the invariants, not the times).
 */
import path from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import { spawnNode } from '../bench-support.js';
import { mulberry32, type Random } from '../torture/prng.js';
import { ProcessWatch } from './process-watch.js';

export interface StormOptions {
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly turns: number;
  /** Turns started together; the next wave starts when this one has settled. */
  readonly wave: number;
  readonly seed: number;
  /**
   * The turns of a wave start this far apart (0: all at once). Spread, they keep about `wave`
   * commands running while others start and stop, as a busy service does; all at once, the
   * wave's first few hundred milliseconds are the service taking in 50 turns at the same instant.
   */
  readonly staggerMs?: number;
  /** Clients leave at a uniformly random instant this long after their answer's headers. */
  readonly leaveWithinMs?: number;
  /** How long a command sleeps (it is always killed before: it outlasts every client). */
  readonly commandSeconds?: number;
  /** After a wave's last client left, how long its turns and processes get to end before they count as running on. */
  readonly settleMs?: number;
  /** How often the machine's processes are scanned (see process-watch.ts); 4 ms unless given. */
  readonly scanEveryMs?: number;
  readonly onWave?: (wave: number, results: readonly StormTurn[]) => void;
}

export type CallOutcome = 'not_started' | 'cancelled' | 'maybe_ran';

export interface StormTurn {
  readonly label: string;
  readonly shape: string;
  readonly turnId?: string;
  /** Wall-clock ms the client left; undefined when it never did (its turn ended first, or the request failed). */
  readonly leftAt?: number;
  readonly error?: string;
  /** The stored status after the settle time. */
  readonly status?: string;
  /** Client left → the turn's end stored. */
  readonly storedMs?: number;
  /** Client left → the turn's processes gone; 0 when none ran after it left; undefined when some still run. */
  readonly processesGoneMs?: number;
  /** When its processes were last seen running and first seen gone after (wall-clock ms). */
  readonly sighting?: { readonly lastAliveAt: number; readonly goneAt: number | undefined };
  /** The turn's stored events: type, and ms from the client's leaving (from the event's own `at`). */
  readonly timeline?: readonly (readonly [string, number])[];
  /** The later of the two: the figure the target is about. */
  readonly endMs?: number;
  /** `outcome` of each `tool.failed` the turn recorded, and `none` for one without. */
  readonly outcomes: readonly (CallOutcome | 'none')[];
  /** True when the turn was not stored `cancelled`, or its processes ran on past the settle time. */
  readonly ranOn: boolean;
}

const SHAPES = ['one sleep', 'children', 'forking loop', 'two commands'] as const;

/** The model script of one turn: its commands export the label first, so that every process of theirs carries it. */
function turnBody(label: string, shape: (typeof SHAPES)[number], seconds: number, agentId: string): string {
  const mark = `export STORM=${label}; `;
  const command = (text: string) => ({ name: 'run_command', arguments: { command: `${mark}${text}`, timeout_ms: (seconds + 30) * 1000 } });
  const calls =
    shape === 'one sleep'
      ? [command(`sleep ${String(seconds)}`)]
      : shape === 'children'
        ? [command(`sleep ${String(seconds)} & sleep ${String(seconds)} & (sleep ${String(seconds + 1)} &); wait`)]
        : shape === 'forking loop'
          ? [command(`end=$(($(date +%s) + ${String(seconds)})); while [ "$(date +%s)" -lt "$end" ]; do sleep 0.05; done`)]
          : [command(`sleep ${String(seconds)}`), command(`sleep ${String(seconds)}`)];
  return JSON.stringify({
    agent: { id: agentId, tools: { computer: true } },
    input: label,
    model: { script: [{ calls }, { text: 'done' }] },
  });
}

interface ClientReport {
  readonly label: string;
  readonly turnId?: string;
  readonly leftAt?: number;
  readonly endedFirst?: boolean;
  readonly error?: string;
}

export const wallClock = (): number => performance.timeOrigin + performance.now();

export async function runStorm(options: StormOptions): Promise<StormTurn[]> {
  const random = mulberry32(options.seed);
  const run = options.seed.toString(36);
  const leaveWithinMs = options.leaveWithinMs ?? 2_500;
  const seconds = options.commandSeconds ?? 4;
  const settleMs = options.settleMs ?? 1_000;
  const clients = spawnNode(path.join(import.meta.dirname, 'storm-clients.ts'), [options.baseUrl], {});
  const reports = new Map<string, (report: ClientReport) => void>();
  const lines = createInterface({ input: clients.stdout! });
  lines.on('line', (line) => {
    const report = JSON.parse(line) as ClientReport;
    reports.get(report.label)?.(report);
  });
  const database = new BetterSqlite3(path.join(options.dataDir, 'turns.sqlite'), { readonly: true, fileMustExist: true });
  const statusOf = database.prepare<[string], { status: string }>('SELECT status FROM turns WHERE id = ?');
  const failuresOf = database.prepare<[string], { body: string }>("SELECT body FROM turn_events WHERE turn_id = ? AND type = 'tool.failed' ORDER BY seq");
  const eventsOf = database.prepare<[string], { type: string; body: string }>('SELECT type, body FROM turn_events WHERE turn_id = ? ORDER BY seq');
  const watch = new ProcessWatch({ wallClock });
  watch.start(options.scanEveryMs ?? 4);
  const results: StormTurn[] = [];
  try {
    for (let first = 0, wave = 0; first < options.turns; first += options.wave, wave += 1) {
      const count = Math.min(options.wave, options.turns - first);
      const entries = Array.from({ length: count }, (_, slot) => {
        const index = first + slot;
        const shape = SHAPES[index % SHAPES.length] ?? 'one sleep';
        const label = `storm-${run}-${String(index)}`;
        // One agent per slot: an agent's commands take turns with its home, and these are meant to run together.
        return {
          label,
          shape,
          body: turnBody(label, shape, seconds, `storm-${String(slot)}`),
          startAfterMs: slot * (options.staggerMs ?? 0),
          leaveAfterMs: leaveInstant(random, leaveWithinMs),
        };
      });
      const waveResults = await runWave({ entries, clients: { send: (line) => clients.stdin!.write(line) }, reports, watch, statusOf, failuresOf, eventsOf, settleMs });
      results.push(...waveResults);
      options.onWave?.(wave, waveResults);
      for (const entry of entries) watch.forget(entry.label);
    }
  } finally {
    watch.stop();
    database.close();
    clients.stdin!.end();
    clients.kill();
  }
  return results;
}

/** Mostly anywhere in the window; one in eight within its first 40 ms, while the command is being started. */
function leaveInstant(random: Random, withinMs: number): number {
  return random.chance(1 / 8) ? random.int(0, 40) : random.int(0, withinMs);
}

async function runWave(options: {
  entries: readonly { label: string; shape: string; body: string; startAfterMs: number; leaveAfterMs: number }[];
  clients: { send: (line: string) => void };
  reports: Map<string, (report: ClientReport) => void>;
  watch: ProcessWatch;
  statusOf: BetterSqlite3.Statement<[string], { status: string }>;
  failuresOf: BetterSqlite3.Statement<[string], { body: string }>;
  eventsOf: BetterSqlite3.Statement<[string], { type: string; body: string }>;
  settleMs: number;
}): Promise<StormTurn[]> {
  const { entries, watch } = options;
  const storedAt = new Map<string, number>();
  const pending = new Map<string, string>(); // turn id → label, left and not yet seen ended
  const arrived = entries.map(
    (entry) =>
      new Promise<ClientReport>((resolve) => {
        options.reports.set(entry.label, (report) => {
          options.reports.delete(entry.label);
          if (report.leftAt !== undefined && report.turnId !== undefined) {
            watch.departed(entry.label);
            pending.set(report.turnId, entry.label);
          }
          resolve(report);
        });
      }),
  );
  // The stored end is polled as often as the processes: the first poll that sees it is its time.
  const poller = setInterval(() => {
    const now = wallClock();
    for (const [turnId, label] of pending) {
      const status = options.statusOf.get(turnId)?.status;
      if (status !== undefined && status !== 'running' && status !== 'queued') {
        storedAt.set(label, now);
        pending.delete(turnId);
      }
    }
  }, 4);
  options.clients.send(`${JSON.stringify({ wave: entries.map(({ label, body, startAfterMs, leaveAfterMs }) => ({ label, body, startAfterMs, leaveAfterMs })) })}\n`);
  const reports = await withTimeout(Promise.all(arrived), 60_000, 'the clients of a wave never all left');
  const lastLeft = Math.max(...reports.map((report) => report.leftAt ?? 0));
  // Until every turn is seen ended and its processes gone, or the settle time is up.
  while (wallClock() < lastLeft + options.settleMs) {
    const running = new Set(watch.running());
    if (pending.size === 0 && entries.every((entry) => !running.has(entry.label))) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  clearInterval(poller);
  watch.scan();
  return entries.map((entry, index): StormTurn => {
    const report = reports[index] as ClientReport;
    const turnId = report.turnId;
    const outcomes = turnId === undefined ? [] : options.failuresOf.all(turnId).map((row) => outcomeOf(row.body));
    const base = { label: entry.label, shape: entry.shape, outcomes, ...(turnId === undefined ? {} : { turnId }) };
    if (report.error !== undefined) return { ...base, error: report.error, ranOn: false };
    const status = turnId === undefined ? undefined : options.statusOf.get(turnId)?.status;
    // Its stream ended before the client meant to leave: nothing to time, and nothing ran on.
    if (report.leftAt === undefined) return { ...base, ...(status === undefined ? {} : { status }), ranOn: false };
    const leftAt = report.leftAt;
    const stored = storedAt.get(entry.label);
    const sighting = watch.sighting(entry.label);
    // Never seen: nothing of it ran. Gone between two scans: at the later one, at the latest.
    const processesGoneMs = sighting === undefined ? 0 : sighting.goneAt === undefined ? undefined : Math.max(0, sighting.goneAt - leftAt);
    const storedMs = stored === undefined ? undefined : Math.max(0, stored - leftAt);
    const endMs = storedMs === undefined || processesGoneMs === undefined ? undefined : Math.max(storedMs, processesGoneMs);
    const timeline = turnId === undefined ? [] : options.eventsOf.all(turnId).map((row) => [row.type, Date.parse((JSON.parse(row.body) as { at: string }).at) - leftAt] as const);
    return {
      ...base,
      leftAt,
      ...(status === undefined ? {} : { status }),
      ...(storedMs === undefined ? {} : { storedMs }),
      ...(processesGoneMs === undefined ? {} : { processesGoneMs }),
      ...(endMs === undefined ? {} : { endMs }),
      timeline,
      ...(sighting === undefined ? {} : { sighting: { lastAliveAt: sighting.lastAliveAt, goneAt: sighting.goneAt } }),
      ranOn: status !== 'cancelled' || endMs === undefined,
    };
  });
}

function outcomeOf(body: string): CallOutcome | 'none' {
  const parsed = JSON.parse(body) as { outcome?: CallOutcome };
  return parsed.outcome ?? 'none';
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(message));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
