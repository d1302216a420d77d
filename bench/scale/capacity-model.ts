/**
 * The capacity model: per-turn costs measured at the lowest concurrency, turned into
 * predictions for every other step (Little's law and a CPU ceiling) and into an extrapolation to
 * 1,000 and 10,000 concurrent turns with a real model's latency. Pure arithmetic, no I/O.
 */

/** What one turn costs, net of the replicas' idle background. CPU in ms. */
export interface PerTurn {
  readonly sseEvents: number;
  readonly sseBytes: number;
  readonly queued: number;
  readonly modelRequests: number;
  readonly storedEvents: number;
  readonly storedEventBytes: number;
  readonly databaseBytes: number;
  readonly commits: number;
  readonly rollbacks: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly walBytes: number;
  readonly walFpiBytes: number;
  readonly notifies: number;
  /** Replica 0's (the one behind the counting proxy), per turn it ran. */
  readonly statements: number;
  /** Replica 0's commits as the proxy saw them (autocommit statements and transactions), per turn it ran. */
  readonly transactions: number;
  readonly statementsByTag: Readonly<Record<string, number>>;
  readonly wireBytes: number;
  readonly connectionMs: number;
  readonly cpu: {
    readonly services: number;
    readonly pgOurs: number;
    readonly pgAux: number;
    readonly bench: number;
    readonly proxy: number;
  };
}

export interface StepResult {
  readonly concurrency: number;
  readonly turns: number;
  /** Turns that did not end `turn.completed`, by how they ended. Throughput and latency count completed turns only. */
  readonly notCompleted: Readonly<Record<string, number>>;
  readonly seconds: number;
  readonly throughput: number;
  readonly latency: { readonly mean: number; readonly p50: number; readonly p99: number };
  readonly perTurn: PerTurn;
  /** Share of the machine's CPU that was busy, 0–1, everyone's work included. */
  readonly machineBusy: number;
  /** CPU ms per second the machine spent on processes that are not this benchmark's. */
  readonly othersMsPerSecond: number;
  readonly serverWalMBps: number;
  readonly rssPeakSumBytes: number;
  readonly connectionsOpenPeak: number;
  readonly connectionsActivePeak: number;
  /** Replica 0's PostgreSQL connections busy on average (of its 10 + 4 + 1). */
  readonly busyConnectionsR0: number;
  /** Per second during the step: the per-turn figures at the step's rate of turns, plus the idle background. */
  readonly rates: { readonly commits: number; readonly serviceCommits: number; readonly rows: number; readonly walBytes: number; readonly notifies: number };
}

/** The replicas with no turns: what they cost per second anyway (pg-boss polling, orphan sweeps). */
export interface Background {
  readonly cpuMsPerSecond: number;
  readonly commitsPerSecond: number;
  /** Replica 0's commits per second × the replicas (the proxy's count, without the listeners' reads). */
  readonly serviceCommitsPerSecond: number;
  readonly rowsPerSecond: number;
  readonly walBytesPerSecond: number;
  readonly notifiesPerSecond: number;
}

export interface ServerProbes {
  readonly plainCommitsPerSecond: number;
  readonly notifyCommitsPerSecond: number;
  readonly probeConnections: number;
  readonly walMBps: number;
  readonly walPerHeartbeatRow: number;
  readonly maxConnections: number;
}

export interface MemoryProbe {
  readonly waitingTurns: number;
  readonly rssBeforeBytes: number;
  readonly rssDuringBytes: number;
  readonly perTurnBytes: number;
  readonly baseRssPerReplicaBytes: number;
}

/** Heartbeats update each live turn's row every 2 s (turn-liveness.ts). */
export const HEARTBEAT_MS = 2_000;
/** PostgreSQL connections a replica holds: the store's pool (10), pg-boss's (4), the LISTEN connection (1). */
export const CONNECTIONS_PER_REPLICA = 10 + 4 + 1;
export const CORES = 2;

export function cpuPerTurn(turn: PerTurn): number {
  const cpu = turn.cpu;
  return cpu.services + cpu.pgOurs + cpu.pgAux + cpu.bench + cpu.proxy;
}

export interface CapacityModel {
  /** Mean turn duration at the lowest concurrency, ms. */
  readonly durationMs: number;
  /** All CPU one turn takes on this machine, every process of the run counted. */
  readonly cpuMsPerTurn: number;
  /** Turns per second this machine can run before its 2 cores are busy. */
  readonly maxThroughput: number;
  /** Little's law: turns in flight when it gets there. */
  readonly inFlightAtSaturation: number;
  readonly base: StepResult;
  readonly background: Background;
}

export function buildModel(base: StepResult, background: Background): CapacityModel {
  const cpuMsPerTurn = cpuPerTurn(base.perTurn);
  const maxThroughput = (CORES * 1_000 - background.cpuMsPerSecond) / cpuMsPerTurn;
  return { durationMs: base.latency.mean, cpuMsPerTurn, maxThroughput, inFlightAtSaturation: (maxThroughput * base.latency.mean) / 1_000, base, background };
}

export interface StepPrediction {
  /** Turns per second the clients would ask for if every turn took as long as at low load. */
  readonly offered: number;
  readonly throughput: number;
  /** The same with the CPU that other processes took during the step taken out of the 2 cores. */
  readonly throughputAfterOthers: number;
  readonly latencyMs: number;
  readonly limit: string;
  readonly commits: number;
  readonly serviceCommits: number;
  readonly rows: number;
  readonly walBytes: number;
  readonly notifies: number;
}

/** What the model expects of a step: a closed loop of `concurrency` clients, each turn as at low load until the CPU is full. */
export function predictStep(model: CapacityModel, step: StepResult, walPerHeartbeatRow: number): StepPrediction {
  const offered = (step.concurrency * 1_000) / model.durationMs;
  const throughput = Math.min(offered, model.maxThroughput);
  const ceilingAfterOthers = (CORES * 1_000 - model.background.cpuMsPerSecond - step.othersMsPerSecond) / model.cpuMsPerTurn;
  const afterOthers = Math.min(offered, ceilingAfterOthers);
  const base = model.base.perTurn;
  const baseHeartbeats = model.durationMs / HEARTBEAT_MS;
  // PostgreSQL per second at the throughput the step really had, so the per-turn model is checked on its own.
  const x = step.turns / step.seconds;
  const heartbeatRows = (step.concurrency * 1_000) / HEARTBEAT_MS;
  return {
    offered,
    throughput,
    throughputAfterOthers: afterOthers,
    latencyMs: (step.concurrency * 1_000) / afterOthers,
    limit: offered >= ceilingAfterOthers ? 'CPU' : 'none (waits on the model)',
    commits: x * base.commits + model.background.commitsPerSecond,
    serviceCommits: x * base.transactions + model.background.serviceCommitsPerSecond,
    rows: x * (base.inserted + base.updated + base.deleted - baseHeartbeats) + heartbeatRows + model.background.rowsPerSecond,
    walBytes: x * (base.walBytes - baseHeartbeats * walPerHeartbeatRow) + heartbeatRows * walPerHeartbeatRow + model.background.walBytesPerSecond,
    notifies: x * base.notifies + model.background.notifiesPerSecond,
  };
}

/** What held the step back: nothing while turns took about as long as at low load, else the busiest resource. */
export function measuredLimit(model: CapacityModel, step: StepResult): string {
  if (step.latency.mean <= 1.25 * model.durationMs) return 'none (waits on the model)';
  if (step.machineBusy >= 0.9) return `CPU (${Math.round(step.machineBusy * 100)}% busy)`;
  if (step.busyConnectionsR0 >= 0.8 * 10) return 'PG pool';
  return 'unclear';
}

export interface Extrapolation {
  readonly concurrent: number;
  readonly durationMs: number;
  readonly throughput: number;
  readonly serviceCores: number;
  /** Service processes at 70% of a core each (one Node process runs on about one core). */
  readonly replicas: number;
  readonly memoryBytes: number;
  readonly postgresCores: number;
  /** The service's own commits (each flushed to the WAL). */
  readonly commits: number;
  readonly rows: number;
  readonly walMBps: number;
  readonly notifies: number;
  /**
   * Every replica listens on the one channel, so each NOTIFY wakes all of them, and each
   * listening backend reads the queue in a transaction of its own: at most NOTIFY/s × replicas.
   */
  readonly notifyDeliveries: number;
  readonly connections: number;
  readonly statements: number;
}

export function extrapolate(model: CapacityModel, concurrent: number, realModelMs: number, modelMs: number, walPerHeartbeatRow: number, memory: MemoryProbe): Extrapolation {
  const base = model.base.perTurn;
  // The turn's own overhead (service, store, tools) stays; the model's waits grow.
  const durationMs = model.durationMs + base.modelRequests * (realModelMs - modelMs);
  const throughput = (concurrent * 1_000) / durationMs;
  const baseHeartbeats = model.durationMs / HEARTBEAT_MS;
  const heartbeatRows = (concurrent * 1_000) / HEARTBEAT_MS;
  const serviceCores = (throughput * base.cpu.services) / 1_000;
  const replicas = Math.max(1, Math.ceil(serviceCores / 0.7));
  const notifies = throughput * base.notifies;
  return {
    concurrent,
    durationMs,
    throughput,
    serviceCores,
    replicas,
    memoryBytes: concurrent * memory.perTurnBytes + replicas * memory.baseRssPerReplicaBytes,
    postgresCores: (throughput * (base.cpu.pgOurs + base.cpu.pgAux)) / 1_000,
    commits: throughput * base.transactions,
    rows: throughput * (base.inserted + base.updated + base.deleted - baseHeartbeats) + heartbeatRows,
    walMBps: (throughput * (base.walBytes - baseHeartbeats * walPerHeartbeatRow) + heartbeatRows * walPerHeartbeatRow) / 1e6,
    notifies,
    notifyDeliveries: notifies * replicas,
    connections: replicas * CONNECTIONS_PER_REPLICA,
    statements: throughput * base.statements,
  };
}

export interface Ceiling {
  readonly name: string;
  readonly need: number;
  readonly ceiling: number;
  readonly unit: string;
}

/** Each limit the extrapolation runs into, the tightest (largest need / ceiling) first. */
export function ceilings(extrapolation: Extrapolation, probes: ServerProbes): Ceiling[] {
  const list: Ceiling[] = [
    { name: 'connections (max_connections)', need: extrapolation.connections, ceiling: probes.maxConnections, unit: '' },
    { name: 'commits with a NOTIFY/s (serialised)', need: extrapolation.notifies, ceiling: probes.notifyCommitsPerSecond, unit: '/s' },
    { name: 'service commits/s (group commit)', need: extrapolation.commits, ceiling: probes.plainCommitsPerSecond, unit: '/s' },
    { name: 'PostgreSQL CPU (cores here)', need: extrapolation.postgresCores, ceiling: CORES, unit: ' cores' },
    { name: 'WAL MB/s (bulk probe here)', need: extrapolation.walMBps, ceiling: probes.walMBps, unit: ' MB/s' },
  ];
  return list.sort((a, b) => b.need / b.ceiling - a.need / a.ceiling);
}
