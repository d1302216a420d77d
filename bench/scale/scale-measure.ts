/**
 * What the scale benchmark measures and how: CPU of every process (services, PostgreSQL's
 * backends by whom they serve, this process, the proxy), PostgreSQL's counters and WAL, the
 * proxy's statement counts, RSS; and the three kinds of measurement built from them: the idle
 * background, the memory of waiting turns, and one step of turns at a given concurrency.
 */
import type { Background, MemoryProbe, PerTurn, StepResult } from './capacity-model.js';
import { runConcurrently, percentile, processCpuMs } from '../bench-support.js';
import type { PgMonitor, PgSnapshot, ProcessRole, StoreTotals } from './pg-monitor.js';
import type { ProxyStats } from './pg-wire-proxy.js';
import { turnBody, type Proxy, type Replica } from './scale-processes.js';
import { fmt, machineCpuMs, openTurn, pause, postgresCpuByPid, postTurn, rssBytes } from './scale-support.js';

/** Makes each turn's first model call wait while `on` (the memory probe), counting those calls. */
export interface ModelHold {
  on: boolean;
  seen: number;
}

interface CpuSnapshot {
  readonly at: number;
  readonly services: number;
  readonly postgres: Map<number, number>;
  readonly bench: number;
  readonly proxy: number;
  readonly machine: { busy: number; total: number };
}

interface CpuUse {
  readonly seconds: number;
  readonly services: number;
  readonly pgOurs: number;
  readonly pgAux: number;
  readonly pgOther: number;
  readonly bench: number;
  readonly proxy: number;
  readonly machineBusy: number;
  readonly machineTotal: number;
}

interface CountSnapshot {
  readonly pg: PgSnapshot;
  readonly proxy: ProxyStats;
  readonly store: StoreTotals;
  readonly modelRequests: number;
  readonly monitorCommits: number;
}

export class Measurer {
  readonly roles = new Map<number, ProcessRole>();
  constructor(
    readonly replicas: readonly Replica[],
    readonly proxy: Proxy,
    readonly monitor: PgMonitor,
    readonly modelRequests: () => number,
  ) {}

  async cpu(): Promise<CpuSnapshot> {
    for (const [pid, role] of await this.monitor.processRoles()) this.roles.set(pid, role);
    const usage = process.cpuUsage();
    let services = 0;
    for (const replica of this.replicas) services += await processCpuMs(replica.child.pid!);
    return {
      at: performance.now(),
      services,
      postgres: await postgresCpuByPid(),
      bench: (usage.user + usage.system) / 1_000,
      proxy: await processCpuMs(this.proxy.child.pid!),
      machine: await machineCpuMs(),
    };
  }

  cpuBetween(start: CpuSnapshot, end: CpuSnapshot): CpuUse {
    const pg = { ours: 0, aux: 0, other: 0 };
    for (const [pid, ms] of end.postgres) {
      const used = ms - (start.postgres.get(pid) ?? 0);
      // The postmaster and the server's own workers are not in pg_stat_activity under a database.
      pg[this.roles.get(pid) ?? 'aux'] += used;
    }
    return {
      seconds: (end.at - start.at) / 1_000,
      services: end.services - start.services,
      pgOurs: pg.ours,
      pgAux: pg.aux,
      pgOther: pg.other,
      bench: end.bench - start.bench,
      proxy: end.proxy - start.proxy,
      machineBusy: end.machine.busy - start.machine.busy,
      machineTotal: end.machine.total - start.machine.total,
    };
  }

  async counts(): Promise<CountSnapshot> {
    const monitorCommits = this.monitor.ownCommits;
    return { pg: await this.monitor.snapshot(), proxy: await this.proxy.stats(), store: await this.monitor.storeTotals(), modelRequests: this.modelRequests(), monitorCommits };
  }

  async rssSum(): Promise<number> {
    let sum = 0;
    for (const replica of this.replicas) sum += await rssBytes(replica.child.pid!);
    return sum;
  }
}

interface CountDelta {
  readonly commits: number;
  readonly rollbacks: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly statements: number;
  readonly statementsByTag: Record<string, number>;
  readonly wireBytes: number;
  readonly busyMs: number;
  readonly transactions: number;
  readonly notifies: number;
  readonly modelRequests: number;
  readonly storedEvents: number;
  readonly storedEventBytes: number;
  readonly databaseBytes: number;
}

export const sumValues = (counts: Readonly<Record<string, number>>): number => Object.values(counts).reduce((sum, value) => sum + value, 0);

function countsBetween(start: CountSnapshot, end: CountSnapshot): CountDelta {
  const statementsByTag: Record<string, number> = {};
  for (const [tag, count] of Object.entries(end.proxy.statements)) statementsByTag[tag] = count - (start.proxy.statements[tag] ?? 0);
  return {
    // The monitor's own queries are transactions in this database too: not the service's.
    commits: end.pg.commits - start.pg.commits - (end.monitorCommits - start.monitorCommits),
    rollbacks: end.pg.rollbacks - start.pg.rollbacks,
    inserted: end.pg.inserted - start.pg.inserted,
    updated: end.pg.updated - start.pg.updated,
    deleted: end.pg.deleted - start.pg.deleted,
    statements: sumValues(statementsByTag),
    statementsByTag,
    wireBytes: end.proxy.clientBytes + end.proxy.serverBytes - start.proxy.clientBytes - start.proxy.serverBytes,
    busyMs: end.proxy.busyMs - start.proxy.busyMs,
    transactions: end.proxy.transactions - start.proxy.transactions,
    notifies: sumValues(end.proxy.notifications) - sumValues(start.proxy.notifications),
    modelRequests: end.modelRequests - start.modelRequests,
    storedEvents: end.store.events - start.store.events,
    storedEventBytes: end.store.eventBytes - start.store.eventBytes,
    databaseBytes: end.store.databaseBytes - start.store.databaseBytes,
  };
}

export interface BackgroundRates extends Background {
  readonly services: number;
  readonly pgOurs: number;
  readonly pgAux: number;
  readonly insertedPerSecond: number;
  readonly updatedPerSecond: number;
  readonly deletedPerSecond: number;
  readonly statementsPerSecond: number;
  readonly statementsByTagPerSecond: Record<string, number>;
  readonly wireBytesPerSecond: number;
  readonly busyMsPerSecond: number;
  readonly transactionsPerSecond: number;
}

export async function measureWaitingMemory(options: { measurer: Measurer; replicas: readonly Replica[]; hold: ModelHold; count: number }): Promise<MemoryProbe> {
  const { measurer, replicas, hold, count } = options;
  const median = async (): Promise<number> => {
    const samples: number[] = [];
    for (let sample = 0; sample < 3; sample += 1) {
      samples.push(await measurer.rssSum());
      await pause(300);
    }
    return percentile(samples, 0.5);
  };
  await pause(1_000);
  const rssBeforeBytes = await median();
  hold.on = true;
  hold.seen = 0;
  const open = Array.from({ length: count }, (_, slot) => openTurn(replicas[slot % replicas.length]!.baseUrl, turnBody(slot)));
  const deadline = performance.now() + 60_000;
  while (hold.seen < count && performance.now() < deadline) await pause(100);
  await pause(1_000);
  const rssDuringBytes = await median();
  const waiting = hold.seen;
  hold.on = false;
  for (const turn of open) turn.abort();
  await Promise.all(open.map((turn) => turn.settled));
  // The cancelled turns are still being written down; what follows must start from a quiet store.
  const quietBy = performance.now() + 60_000;
  while ((await measurer.monitor.liveTurns()) > 0 && performance.now() < quietBy) await pause(250);
  return {
    waitingTurns: waiting,
    rssBeforeBytes,
    rssDuringBytes,
    perTurnBytes: (rssDuringBytes - rssBeforeBytes) / Math.max(1, waiting),
    baseRssPerReplicaBytes: rssBeforeBytes / replicas.length,
  };
}

/**
 * The replicas with no turns, for `ms`. `proxiedReplicas` is how many replicas talk through the
 * proxy, so replica 0's commits can stand for all of them.
 */
export async function measureBackground(options: { measurer: Measurer; ms: number; replicas: number; proxiedReplicas: number }): Promise<BackgroundRates> {
  const { measurer } = options;
  const counts0 = await measurer.counts();
  const cpu0 = await measurer.cpu();
  await pause(options.ms);
  const cpu1 = await measurer.cpu();
  const counts1 = await measurer.counts();
  const cpu = measurer.cpuBetween(cpu0, cpu1);
  const counts = countsBetween(counts0, counts1);
  const wal = await measurer.monitor.walBetween(counts0.pg.flushLsn, counts1.pg.flushLsn);
  const seconds = cpu.seconds;
  const statementsByTagPerSecond: Record<string, number> = {};
  for (const [tag, count] of Object.entries(counts.statementsByTag)) statementsByTagPerSecond[tag] = count / seconds;
  return {
    services: cpu.services / seconds,
    pgOurs: cpu.pgOurs / seconds,
    pgAux: cpu.pgAux / seconds,
    cpuMsPerSecond: (cpu.services + cpu.pgOurs + cpu.pgAux + cpu.proxy) / seconds,
    commitsPerSecond: counts.commits / seconds,
    serviceCommitsPerSecond: (counts.transactions / seconds) * (options.replicas / options.proxiedReplicas),
    insertedPerSecond: counts.inserted / seconds,
    updatedPerSecond: counts.updated / seconds,
    deletedPerSecond: counts.deleted / seconds,
    rowsPerSecond: (counts.inserted + counts.updated + counts.deleted) / seconds,
    walBytesPerSecond: wal.bytes / seconds,
    notifiesPerSecond: counts.notifies / seconds,
    statementsPerSecond: counts.statements / seconds,
    statementsByTagPerSecond,
    wireBytesPerSecond: counts.wireBytes / seconds,
    busyMsPerSecond: counts.busyMs / seconds,
    transactionsPerSecond: counts.transactions / seconds,
  };
}

/**
 * One step: `turns` turns from `concurrency` clients, round-robin over the replicas, each client
 * slot with its own agent. Then waits `settleMs` for PostgreSQL to publish its counters and
 * returns the step's figures net of the idle background.
 */
export async function runStep(options: {
  measurer: Measurer;
  replicas: readonly Replica[];
  concurrency: number;
  turns: number;
  background: BackgroundRates;
  settleMs: number;
  /** Every replica behind the proxy, not replica 0 alone. */
  proxyAll: boolean;
}): Promise<StepResult> {
  const { measurer, replicas, concurrency, turns, background, settleMs } = options;
  const replicaCount = replicas.length;
  const counts0 = await measurer.counts();
  const cpu0 = await measurer.cpu();
  const sampling = { on: true };
  const peaks = { rss: 0, open: 0, active: 0 };
  const sampler = (async () => {
    while (sampling.on) {
      peaks.rss = Math.max(peaks.rss, await measurer.rssSum());
      const connections = await measurer.monitor.connections();
      peaks.open = Math.max(peaks.open, connections.open);
      peaks.active = Math.max(peaks.active, connections.active);
      for (const [pid, role] of await measurer.monitor.processRoles()) measurer.roles.set(pid, role);
      await pause(500);
    }
  })();
  const latencies: number[] = [];
  let events = 0;
  let bytes = 0;
  let queued = 0;
  let r0Turns = 0;
  const notCompleted: Record<string, number> = {};
  const stepStarted = performance.now();
  try {
    await runConcurrently(turns, concurrency, async (index, slot) => {
      const replica = index % replicaCount;
      if (replica === 0 || options.proxyAll) r0Turns += 1;
      const turn = await postTurn(replicas[replica]!.baseUrl, turnBody(slot));
      if (turn.outcome === 'completed') latencies.push(turn.latencyMs);
      else {
        const key = `${turn.outcome} (replica ${replica})`;
        notCompleted[key] = (notCompleted[key] ?? 0) + 1;
      }
      events += turn.events;
      bytes += turn.bytes;
      if (turn.queued) queued += 1;
    });
  } finally {
    sampling.on = false;
    await sampler;
  }
  const seconds = (performance.now() - stepStarted) / 1_000;
  const cpu1 = await measurer.cpu();
  // PostgreSQL keeps a busy backend's counters for up to 10 s before it publishes them (PGSTAT_IDLE_INTERVAL).
  await pause(settleMs);
  const counts1 = await measurer.counts();
  const cpu = measurer.cpuBetween(cpu0, cpu1);
  const counts = countsBetween(counts0, counts1);
  const wal = await measurer.monitor.walBetween(counts0.pg.flushLsn, counts1.pg.flushLsn);
  const countWindow = seconds + settleMs / 1_000;
  const net = (total: number, perSecond: number, over = countWindow): number => total - perSecond * over;
  const r0 = Math.max(1, r0Turns);
  const statementsByTag: Record<string, number> = {};
  for (const [tag, count] of Object.entries(counts.statementsByTag)) statementsByTag[tag] = net(count, background.statementsByTagPerSecond[tag] ?? 0) / r0;
  const perTurn: PerTurn = {
    sseEvents: events / turns,
    sseBytes: bytes / turns,
    queued: queued / turns,
    modelRequests: counts.modelRequests / turns,
    storedEvents: counts.storedEvents / turns,
    storedEventBytes: counts.storedEventBytes / turns,
    databaseBytes: counts.databaseBytes / turns,
    commits: net(counts.commits, background.commitsPerSecond) / turns,
    rollbacks: counts.rollbacks / turns,
    inserted: net(counts.inserted, background.insertedPerSecond) / turns,
    updated: net(counts.updated, background.updatedPerSecond) / turns,
    deleted: net(counts.deleted, background.deletedPerSecond) / turns,
    walBytes: net(wal.bytes, background.walBytesPerSecond) / turns,
    walFpiBytes: wal.fpiBytes / turns,
    notifies: net(counts.notifies, background.notifiesPerSecond) / turns,
    statements: net(counts.statements, background.statementsPerSecond) / r0,
    transactions: net(counts.transactions, background.transactionsPerSecond) / r0,
    statementsByTag,
    wireBytes: net(counts.wireBytes, background.wireBytesPerSecond) / r0,
    connectionMs: net(counts.busyMs, background.busyMsPerSecond) / r0,
    cpu: {
      services: net(cpu.services, background.services, cpu.seconds) / turns,
      pgOurs: net(cpu.pgOurs, background.pgOurs, cpu.seconds) / turns,
      pgAux: net(cpu.pgAux, background.pgAux, cpu.seconds) / turns,
      bench: cpu.bench / turns,
      proxy: cpu.proxy / turns,
    },
  };
  const perSecond = turns / seconds;
  const ours = cpu.services + cpu.pgOurs + cpu.pgAux + cpu.bench + cpu.proxy;
  const result: StepResult = {
    concurrency,
    turns,
    notCompleted,
    seconds,
    throughput: latencies.length / seconds,
    latency: { mean: latencies.reduce((sum, value) => sum + value, 0) / latencies.length, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    perTurn,
    machineBusy: cpu.machineBusy / cpu.machineTotal,
    othersMsPerSecond: Math.max(0, cpu.machineBusy - ours) / cpu.seconds,
    serverWalMBps: wal.serverBytes / countWindow / 1e6,
    rssPeakSumBytes: peaks.rss,
    connectionsOpenPeak: peaks.open,
    connectionsActivePeak: peaks.active,
    busyConnectionsR0: net(counts.busyMs, background.busyMsPerSecond, settleMs / 1_000) / (seconds * 1_000),
    rates: {
      commits: perTurn.commits * perSecond + background.commitsPerSecond,
      serviceCommits: perTurn.transactions * perSecond + background.serviceCommitsPerSecond,
      rows: (perTurn.inserted + perTurn.updated + perTurn.deleted) * perSecond + background.rowsPerSecond,
      walBytes: perTurn.walBytes * perSecond + background.walBytesPerSecond,
      notifies: perTurn.notifies * perSecond + background.notifiesPerSecond,
    },
  };
  const failures = Object.entries(notCompleted).map(([outcome, count]) => `${count} ${outcome}`);
  console.error(`  step C=${concurrency}: ${turns} turns in ${fmt(seconds)} s (${fmt(result.throughput)} completed/s)${failures.length === 0 ? '' : `; not completed: ${failures.join(', ')}`}`);
  return result;
}
