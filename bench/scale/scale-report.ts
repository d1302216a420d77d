/**
 * The scale benchmark's report: what a turn does and costs, CPU and memory, the capacity model's
 * predictions beside the measurements, the server probes, and the extrapolation to 1,000 and
 * 10,000 concurrent turns. Plain-text tables on stdout.
 */
import {
  buildModel,
  ceilings,
  CONNECTIONS_PER_REPLICA,
  CORES,
  cpuPerTurn,
  extrapolate,
  measuredLimit,
  predictStep,
  type MemoryProbe,
  type ServerProbes,
  type StepResult,
} from './capacity-model.js';
import { sumValues, type BackgroundRates } from './scale-measure.js';
import { fmt, table, type ScaleSettings } from './scale-support.js';

export function printReport(report: {
  settings: ScaleSettings;
  steps: readonly StepResult[];
  background: BackgroundRates;
  memory: MemoryProbe;
  probes: ServerProbes;
  pgVersion: string;
  fsync: string;
  runSeconds: number;
  databaseName: string;
}): void {
  const { steps, background, memory, probes, settings } = report;
  const base = steps[0]!;
  const model = buildModel(base, background);
  const kb = (value: number): string => fmt(value / 1024, 1);
  const mb = (value: number): string => fmt(value / 1024 / 1024, 0);
  const replicaCount = settings.replicas;
  const c = (step: StepResult): string => String(step.concurrency);

  console.log(`\n# turn-runtime at scale: ${replicaCount} replicas (dist/src/server.js) on PostgreSQL ${report.pgVersion.split(' ')[0] ?? ''} (${report.fsync}), database ${report.databaseName}`);
  console.log(`fake model: ${settings.modelMs} ms before each answer; each turn ${fmt(base.perTurn.modelRequests, 0)} model calls with 4 parallel read_file calls per round, streamed as SSE; round-robin client`);
  console.log(`${CORES} cores shared by the services, PostgreSQL, this client, the fake model and whatever else runs here; the run took ${fmt(report.runSeconds, 0)} s`);
  console.log(
    `idle background (${replicaCount} replicas, no turns; subtracted below): services ${fmt(background.services)} ms CPU/s, PostgreSQL ${fmt(background.pgOurs + background.pgAux)} ms/s, ` +
      `${fmt(background.commitsPerSecond)} commits/s (pg-boss polling, orphan sweeps), ${kb(background.walBytesPerSecond)} kB WAL/s`,
  );

  console.log('\n## What a turn does');
  console.log(
    table(
      ['C', 'turns', 'not completed', 'SSE events', 'SSE kB', 'model calls', 'stored events', 'event JSON kB', 'DB growth kB', 'NOTIFYs'],
      steps.map((step) => {
        const turn = step.perTurn;
        return [c(step), String(step.turns), String(sumValues(step.notCompleted)), fmt(turn.sseEvents), kb(turn.sseBytes), fmt(turn.modelRequests, 2), fmt(turn.storedEvents), kb(turn.storedEventBytes), kb(turn.databaseBytes), fmt(turn.notifies)];
      }),
    ),
  );
  for (const step of steps) {
    const failures = Object.entries(step.notCompleted);
    if (failures.length > 0) console.log(`C=${step.concurrency} not completed: ${failures.map(([outcome, count]) => `${count} ${outcome}`).join(', ')}`);
    if (step.perTurn.queued > 0) console.log(`C=${step.concurrency}: ${fmt(step.perTurn.queued * 100)}% of turns waited behind their agent's previous turn`);
  }

  console.log('\n## What a turn costs PostgreSQL (net of the idle background)');
  console.log(
    table(
      ['C', 'statements', 'service commits', 'all commits', 'rows inserted', 'rows updated', 'WAL kB', 'PG wire kB', 'connection ms'],
      steps.map((step) => {
        const turn = step.perTurn;
        return [c(step), fmt(turn.statements), fmt(turn.transactions), fmt(turn.commits), fmt(turn.inserted), fmt(turn.updated), kb(turn.walBytes), kb(turn.wireBytes), fmt(turn.connectionMs, 0)];
      }),
    ),
  );
  const tags = Object.entries(base.perTurn.statementsByTag)
    .filter(([, count]) => count >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([tag, count]) => `${tag} ${fmt(count)}`)
    .join(', ');
  console.log(`statements at C=${base.concurrency}: ${tags}`);
  console.log("statements, service commits, wire bytes and connection ms: replica 0's, behind the counting proxy, per turn it ran. all commits (pg_stat_database) add the");
  console.log("read transaction each listening replica runs per NOTIFY it is woken for. WAL: this database's records only (pg_walinspect); full-page images " + kb(base.perTurn.walFpiBytes) + ' kB/turn');

  console.log('\n## CPU ms per turn (net of the idle background), memory, connections');
  console.log(
    table(
      ['C', 'services', 'PG backends', 'PG server procs', 'client+model', 'proxy', 'total', 'machine busy', 'others ms/s', 'services RSS MB', 'PG conns open/active', 'busy conns r0'],
      steps.map((step) => {
        const cpu = step.perTurn.cpu;
        return [
          c(step),
          fmt(cpu.services, 1),
          fmt(cpu.pgOurs, 1),
          fmt(cpu.pgAux, 1),
          fmt(cpu.bench, 1),
          fmt(cpu.proxy, 1),
          fmt(cpuPerTurn(step.perTurn), 1),
          `${fmt(step.machineBusy * 100, 0)}%`,
          fmt(step.othersMsPerSecond, 0),
          mb(step.rssPeakSumBytes),
          `${step.connectionsOpenPeak}/${step.connectionsActivePeak}`,
          fmt(step.busyConnectionsR0, 1),
        ];
      }),
    ),
  );
  console.log('services: the 3 replicas together. others ms/s: CPU the machine gave to processes outside this run (the noise). PG server procs: walwriter, checkpointer, autovacuum …');
  console.log(`busy conns r0: replica 0's PostgreSQL connections in use on average (its pool has 10, pg-boss 4, LISTEN 1)`);

  console.log(
    `\n## Memory while waiting: ${memory.waitingTurns} turns parked in their first model call: services' RSS ${mb(memory.rssBeforeBytes)} MB → ${mb(memory.rssDuringBytes)} MB, ` +
      `${kb(memory.perTurnBytes)} kB per waiting turn (an idle replica: ${mb(memory.baseRssPerReplicaBytes)} MB)`,
  );

  console.log(
    `\n## The model, from C=${base.concurrency}: ${fmt(model.cpuMsPerTurn, 1)} ms CPU per turn (every process of the run), a turn takes ${fmt(model.durationMs, 0)} ms → ` +
      `at most ${fmt(model.maxThroughput)} turns/s on ${CORES} cores, ${fmt(model.inFlightAtSaturation, 0)} turns in flight there (Little's law)`,
  );
  const predictions = steps.map((step) => ({ step, prediction: predictStep(model, step, probes.walPerHeartbeatRow) }));
  console.log(
    table(
      ['C', 'offered turns/s', 'pred turns/s', 'pred, others out', 'meas', 'meas/pred', 'mean ms pred', 'meas', 'p50', 'p99', 'limit pred', 'limit meas'],
      predictions.map(({ step, prediction }) => [
        c(step),
        fmt(prediction.offered),
        fmt(prediction.throughput),
        fmt(prediction.throughputAfterOthers),
        fmt(step.throughput),
        `${fmt(step.throughput / prediction.throughputAfterOthers, 2)}×`,
        fmt(prediction.latencyMs, 0),
        fmt(step.latency.mean, 0),
        fmt(step.latency.p50, 0),
        fmt(step.latency.p99, 0),
        prediction.limit,
        measuredLimit(model, step) + (sumValues(step.notCompleted) > 0 ? `, ${sumValues(step.notCompleted)} turns failed` : ''),
      ]),
    ),
  );
  console.log("offered = C / the low-load turn; pred = min(offered, the 2-core ceiling); 'others out' also takes out the CPU other processes used during that step");
  console.log(`\nPostgreSQL per second during each step: predicted from C=${base.concurrency}'s per-turn figures at the step's rate of turns, beside measured (background included)`);
  console.log(
    table(
      ['C', 'all commits pred', 'meas', 'service commits pred', 'meas', 'rows pred', 'meas', 'WAL MB/s pred', 'meas', 'NOTIFY/s pred', 'meas', 'server WAL MB/s'],
      predictions.map(({ step, prediction }) => [
        c(step),
        fmt(prediction.commits, 0),
        fmt(step.rates.commits, 0),
        fmt(prediction.serviceCommits, 0),
        fmt(step.rates.serviceCommits, 0),
        fmt(prediction.rows, 0),
        fmt(step.rates.rows, 0),
        fmt(prediction.walBytes / 1e6, 2),
        fmt(step.rates.walBytes / 1e6, 2),
        fmt(prediction.notifies, 0),
        fmt(step.rates.notifies, 0),
        fmt(step.serverWalMBps, 2),
      ]),
    ),
  );
  console.log('server WAL: every database on the server, over the step and its settle (the other users of this PostgreSQL included)');

  console.log(
    `\n## This PostgreSQL, probed: ${fmt(probes.plainCommitsPerSecond, 0)} plain commits/s and ${fmt(probes.notifyCommitsPerSecond, 0)} commits/s with a NOTIFY (${probes.probeConnections} connections each), ` +
      `${fmt(probes.walMBps)} MB/s WAL in a bulk insert, ${fmt(probes.walPerHeartbeatRow, 0)} B WAL per heartbeat row, max_connections ${probes.maxConnections}`,
  );

  const scales = [1_000, 10_000].map((concurrent) => extrapolate(model, concurrent, settings.realModelMs, settings.modelMs, probes.walPerHeartbeatRow, memory));
  console.log(`\n## Extrapolation: ${settings.realModelMs} ms per model call, everything else per turn as measured at C=${base.concurrency}`);
  const row = (name: string, value: (scale: (typeof scales)[number]) => string): string[] => [name, ...scales.map(value)];
  console.log(
    table(
      ['', ...scales.map((scale) => `${fmt(scale.concurrent, 0)} turns`)],
      [
        row('turn duration s', (scale) => fmt(scale.durationMs / 1_000, 2)),
        row('turns/s', (scale) => fmt(scale.throughput, 0)),
        row('service CPU cores', (scale) => fmt(scale.serviceCores, 1)),
        row('replicas (70% of a core each)', (scale) => String(scale.replicas)),
        row('service memory GB', (scale) => fmt(scale.memoryBytes / 1024 ** 3, 1)),
        row('PostgreSQL CPU cores', (scale) => fmt(scale.postgresCores, 1)),
        row('statements/s', (scale) => fmt(scale.statements, 0)),
        row('service commits/s', (scale) => fmt(scale.commits, 0)),
        row('rows written/s', (scale) => fmt(scale.rows, 0)),
        row('WAL MB/s', (scale) => fmt(scale.walMBps, 1)),
        row('NOTIFY/s', (scale) => fmt(scale.notifies, 0)),
        row('listener wake-ups/s (NOTIFY × replicas)', (scale) => fmt(scale.notifyDeliveries, 0)),
        row(`PG connections (${CONNECTIONS_PER_REPLICA} per replica)`, (scale) => fmt(scale.connections, 0)),
      ],
    ),
  );
  for (const scale of scales) {
    const list = ceilings(scale, probes);
    console.log(`${fmt(scale.concurrent, 0)} turns, need / what this PostgreSQL did:`);
    for (const ceiling of list) console.log(`  ${ceiling.name.padEnd(38)} ${`${fmt(ceiling.need, 0)}${ceiling.unit}`.padStart(12)} / ${`${fmt(ceiling.ceiling, 0)}${ceiling.unit}`.padEnd(12)} ${fmt(ceiling.need / ceiling.ceiling, 2)}×`);
  }
  const perReplicaTurns = (0.7 * 1_000) / base.perTurn.cpu.services;
  const perReplicaInFlight = (perReplicaTurns * scales[0]!.durationMs) / 1_000;
  console.log(
    `\nOne replica process (Node runs a turn on one core) at 70% of a core: ${fmt(perReplicaTurns)} turns/s, ${fmt(perReplicaInFlight, 0)} turns in flight at ${settings.realModelMs} ms per model call, ` +
      `${mb(memory.baseRssPerReplicaBytes + perReplicaInFlight * memory.perTurnBytes)} MB RSS; a 2-core box runs two: ${fmt(2 * perReplicaInFlight, 0)} turns in flight. ` +
      `Memory alone would allow ${fmt((1024 ** 3) / memory.perTurnBytes, 0)} waiting turns per GB.`,
  );
  console.log('\nThe machine is shared: CPU figures move by ±20% between runs and more when others build or test; compare ratios, not digits.');
}
