/**
 * Issue #13's load figures, on the compiled service with its embedded defaults:
 *
 * 1. BENCH_LOAD_TURNS (default 1,000) streaming turns at once, each the turn bench's turn
 *    with a model that takes BENCH_LOAD_MODEL_MS (default 2,000 ms) per call, so turns are
 *    long and mostly waiting: all must complete; printed are the service's RSS per turn in
 *    flight beyond its idle baseline, its event-loop delay p99 over the run (the service's own
 *    `monitorEventLoopDelay`, read from /metrics) and its CPU per turn. Then the same turns
 *    again, held at their last model call until every one waits there: after one full garbage
 *    collection (through the inspector, started by SIGUSR1) and BENCH_SETTLE_MS idle, the RSS
 *    and heap used per waiting turn beyond the idle baseline; and again at BENCH_LONG_SETTLE_MS
 *    idle, once V8's memory reducer has given back the pages the bursts grew its heap by.
 * 2. Disconnect → abort at BENCH_ABORT_TURNS (default 200) at once: every client goes away
 *    together, and the time until each turn's model request is closed at the provider, and
 *    until each of its running tools' requests is closed (two `web_fetch` calls per turn,
 *    held open by a server here), is printed as p50 and p99. A client's leaving is timed when
 *    it closes its connection (see disconnect-clients.ts), the other end when this process
 *    first reads that the connection closed. The crowd leaves BENCH_ABORT_ROUNDS (default 5)
 *    times: each figure is the median of the rounds', with the lowest and highest p99 beside
 *    it. Beside them, the floor: the same clients leaving requests held by that server
 *    directly, with no service between. With BENCH_DISCONNECT_PROFILE=<file.cpuprofile>, the
 *    service's CPU profile of the model request's rounds is written there (through its inspector,
 *    one sample every 100 µs).
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { QUIET_REQUEST_MS } from '../src/models/waiting-request.js';
import { QUIET_WINDOW_MS } from '../src/turns/event-window.js';
import { startFakeResponsesProvider, type FakeRequest, type FakeStep } from '../test/support/fake-responses-provider.js';
import { noteClientClose } from '../test/support/note-client-close.js';
import { collectGarbage, profiled, rssKb } from './service-inspector.js';
import { BENCH_FILES, MODEL_CALLS_PER_TURN, benchFileText, benchRound, benchStep, freePort, median, percentile, processCpuMs, spawnNode, spawnService, waitForHealth } from './bench-support.js';

const LOAD_TURNS = Number(process.env['BENCH_LOAD_TURNS'] ?? 1000);
const MODEL_MS = Number(process.env['BENCH_LOAD_MODEL_MS'] ?? 2000);
const ABORT_TURNS = Number(process.env['BENCH_ABORT_TURNS'] ?? 200);
const WARMUP_ABORTS = 20;
/** Each crowd leaves this many times; a figure is the median of the rounds' (one round is one burst, and this machine is noisy). */
const ABORT_ROUNDS = Number(process.env['BENCH_ABORT_ROUNDS'] ?? 5);
/** Extra Node options for the service (say `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it under the load). */
const SERVICE_NODE_ARGS = (process.env['BENCH_SERVICE_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== '');
/** Extra environment for the service, `NAME=value` pairs split on spaces (say `LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2` to run it on another allocator). */
const SERVICE_ENV = Object.fromEntries(
  (process.env['BENCH_SERVICE_ENV'] ?? '')
    .split(' ')
    .filter((pair) => pair.includes('='))
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const RSS_TARGET_KB = 100;
/** How long the service idles, every turn waiting, before its settled memory is read. */
const SETTLE_MS = Number(process.env['BENCH_SETTLE_MS'] ?? 3_000);
/** And again, this long idle in all: after V8's memory reducer has given back what the bursts grew the heap by. */
const LONG_SETTLE_MS = Number(process.env['BENCH_LONG_SETTLE_MS'] ?? 20_000);
/**
 * A folder for three heap snapshots of the service: `baseline.heapsnapshot` at the idle baseline
 * (the inspector then starts before the load, not after it), `waiting.heapsnapshot` with every
 * turn waiting on its last model call, after the settled readings, and `after.heapsnapshot` once
 * they have all ended (see summarize-heap.ts). Unset, none are taken.
 */
const HEAP_SNAPSHOT_DIR = process.env['BENCH_HEAP_SNAPSHOT_DIR'];
/** Where to write a CPU profile of the service while the crowds leave their model requests (part 2's first rounds), if anywhere. */
const DISCONNECT_PROFILE = process.env['BENCH_DISCONNECT_PROFILE'];
const ABORT_TARGET_MS = 50;

export async function runLoadBench(): Promise<void> {
  // A minute of keep-alive, as providers give: with Node's 5 s, the service (its event loop
  // lagging by up to a second under this load, and its retries off) sent some turns' last
  // request on a connection the fake was closing, and they failed with "other side closed".
  const provider = await startFakeResponsesProvider({ recordRequests: false, keepAliveTimeoutMs: 60_000 });
  const held = await startHoldingServer();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-load-'));
  const texts = await Promise.all(BENCH_FILES.map((_, index) => benchFileText(index)));
  for (let slot = 0; slot < LOAD_TURNS; slot += 1) {
    const home = path.join(dataDir, 'agents', `load-${slot}`, 'home');
    await mkdir(home, { recursive: true });
    for (const [index, file] of BENCH_FILES.entries()) await writeFile(path.join(home, file), texts[index] ?? '');
  }
  const inspectPort = await freePort();
  const { service, baseUrl } = await spawnService({
    dataDir,
    providerUrl: provider.baseUrl,
    // The held `web_fetch` requests must outlast the wait for the service to go quiet (up to 30 s,
    // see untilQuiet): at the default 15 s the tool's own timeout could close them first.
    env: { ...SERVICE_ENV, MAX_CONCURRENT_TURNS: String(2 * Math.max(LOAD_TURNS, ABORT_TURNS)), WEB_FETCH_ALLOW_HOSTS: `127.0.0.1:${held.port}`, WEB_FETCH_TIMEOUT_MS: '120000' },
    // Where the inspector listens once SIGUSR1 starts it, for the settled reading (see collectGarbage); off until then.
    nodeArgs: [...SERVICE_NODE_ARGS, `--inspect-port=127.0.0.1:${inspectPort}`],
  });
  try {
    await waitForHealth(baseUrl);
    const pid = service.pid!;
    // ---- 1. many long turns at once
    const slowStep = (request: FakeRequest): FakeStep => ({ ...benchStep(request), headersDelayMs: MODEL_MS });
    provider.setDefault(benchStep);
    await Promise.all(Array.from({ length: 20 }, (_, slot) => streamTurn(baseUrl, turnBody(`load-${slot}`, 'Read the four files twice.'))));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // With snapshots asked for, the inspector starts here, and the load runs with it.
    if (HEAP_SNAPSHOT_DIR !== undefined) {
      await collectGarbage(pid, inspectPort, path.join(HEAP_SNAPSHOT_DIR, 'baseline.heapsnapshot'));
      console.log(`heap snapshots go to ${HEAP_SNAPSHOT_DIR}: the RSS figures of this run include the inspector's and the snapshots' own memory, and do not compare with other runs'`);
    }
    const baselineKb = await rssKb(pid);
    const baselineMemory = await memoryKb(baseUrl);
    provider.setDefault(slowStep);
    await scrapeEventLoopP99(baseUrl); // starts the service's delay histogram afresh
    const cpu0 = await processCpuMs(pid);
    let peakKb = baselineKb;
    const sampler = setInterval(() => {
      void rssKb(pid).then((kb) => {
        peakKb = Math.max(peakKb, kb);
      });
    }, 100);
    const started = performance.now();
    const outcomes = await Promise.all(Array.from({ length: LOAD_TURNS }, (_, slot) => streamTurn(baseUrl, turnBody(`load-${slot}`, 'Read the four files twice.'))));
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const cpuPerTurn = ((await processCpuMs(pid)) - cpu0) / LOAD_TURNS;
    const loopP99Ms = await scrapeEventLoopP99(baseUrl);
    const completed = outcomes.filter((outcome) => outcome === 'completed').length;
    const perTurnKb = (peakKb - baselineKb) / LOAD_TURNS;
    console.log(`\n${LOAD_TURNS} streaming turns at once, ${MODEL_MS} ms per model call (3 calls and 8 read_file calls per turn):`);
    console.log(`  completed ${completed}/${LOAD_TURNS} in ${seconds.toFixed(1)} s`);
    console.log(`  service RSS: ${(baselineKb / 1024).toFixed(0)} MB idle, ${(peakKb / 1024).toFixed(0)} MB at the peak → ${perTurnKb.toFixed(1)} KB per turn in flight (target < ${RSS_TARGET_KB} KB)${perTurnKb < RSS_TARGET_KB ? '' : ' ✗'}`);
    console.log(`  service event-loop delay p99 over the run: ${loopP99Ms.toFixed(1)} ms; service CPU ${cpuPerTurn.toFixed(2)} ms per turn`);
    if (completed !== LOAD_TURNS) {
      const ends = new Set(outcomes.filter((outcome) => outcome !== 'completed'));
      throw new Error(`${LOAD_TURNS - completed} of the ${LOAD_TURNS} turns did not complete; their streams ended:\n${[...ends].join('\n---\n')}`);
    }

    // ---- 1b. the same turns again, every one of them waiting on its last model call, read once the service has settled
    let waitingOnLast = 0;
    provider.setDefault((request) => {
      if (benchRound(request) < MODEL_CALLS_PER_TURN - 1) return benchStep(request);
      waitingOnLast += 1;
      return { hang: true };
    });
    const leave = new AbortController();
    const parked = Array.from({ length: LOAD_TURNS }, (_, slot) => streamTurn(baseUrl, turnBody(`load-${slot}`, 'Read the four files twice.'), leave.signal).catch(() => 'left'));
    for (let waited = 0; waitingOnLast < LOAD_TURNS; waited += 100) {
      if (waited > 120_000) throw new Error(`only ${waitingOnLast} of ${LOAD_TURNS} turns reached their last model call`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // A request still out after QUIET_REQUEST_MS has its conversation deflated, at the first sweep
    // after (see WaitingRequest): that is part of settling, and the texts it replaces are garbage
    // to collect. A collection before it read those texts' garbage as what the turns hold.
    await new Promise((resolve) => setTimeout(resolve, 2 * QUIET_REQUEST_MS + 500));
    await untilQuiet(pid);
    // What the bursts left behind is not what a waiting turn holds: collect it first, then let the pages go back.
    await collectGarbage(pid, inspectPort);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settledKb = await rssKb(pid);
    const settledMemory = await memoryKb(baseUrl);
    // V8 gives back the pages a burst grew its heap by only once its memory reducer has run, some seconds into idling.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, LONG_SETTLE_MS - SETTLE_MS)));
    const longSettledKb = await rssKb(pid);
    const longSettledMemory = await memoryKb(baseUrl);
    if (HEAP_SNAPSHOT_DIR !== undefined) await collectGarbage(pid, inspectPort, path.join(HEAP_SNAPSHOT_DIR, 'waiting.heapsnapshot'));
    leave.abort();
    await Promise.all(parked);
    // What is left once they have all ended: what the bursts' agents keep, not their turns. An
    // ended turn's event window is let go at the second sweep of the quiet windows after its end.
    await untilQuiet(pid);
    await new Promise((resolve) => setTimeout(resolve, 2 * QUIET_WINDOW_MS + 500));
    await collectGarbage(pid, inspectPort, HEAP_SNAPSHOT_DIR === undefined ? undefined : path.join(HEAP_SNAPSHOT_DIR, 'after.heapsnapshot'));
    const endedMemory = await memoryKb(baseUrl);
    const settledPerTurnKb = (settledKb - baselineKb) / LOAD_TURNS;
    console.log(`  the same ${LOAD_TURNS} turns all waiting on their last model call, after a full garbage collection and ${SETTLE_MS / 1000} s idle: RSS ${(settledKb / 1024).toFixed(0)} MB → ${settledPerTurnKb.toFixed(1)} KB per waiting turn (target < ${RSS_TARGET_KB} KB)${settledPerTurnKb < RSS_TARGET_KB ? '' : ' ✗'}`);
    const perWaiting = (memory: typeof settledMemory, part: keyof typeof settledMemory): string => ((memory[part] - baselineMemory[part]) / LOAD_TURNS).toFixed(1);
    const parts = (memory: typeof settledMemory) =>
      `V8 heap used ${perWaiting(memory, 'heapUsed')} KB (heap allocated ${perWaiting(memory, 'heapTotal')} KB: new space ${perWaiting(memory, 'newSpace')}, old space ${perWaiting(memory, 'oldSpace')}), outside the heap (buffers, ArrayBuffers) ${perWaiting(memory, 'external')} KB`;
    console.log(`    of which, per waiting turn: ${parts(settledMemory)}`);
    const longPerTurnKb = (longSettledKb - baselineKb) / LOAD_TURNS;
    console.log(`  still waiting, ${LONG_SETTLE_MS / 1000} s idle: RSS ${(longSettledKb / 1024).toFixed(0)} MB → ${longPerTurnKb.toFixed(1)} KB per waiting turn (target < ${RSS_TARGET_KB} KB)${longPerTurnKb < RSS_TARGET_KB ? '' : ' ✗'}`);
    console.log(`    of which, per waiting turn: ${parts(longSettledMemory)}`);
    console.log(`  once they have all ended, after a full garbage collection, per turn: ${parts(endedMemory)} (what stays with their agents)`);

    // ---- 2. everyone leaves at once: the model request, then the tools
    const clients = startDisconnectClients(baseUrl);
    const modelEnds = new Map<string, Promise<number>>();
    provider.setDefault((request) => {
      modelEnds.set(inputOf(request), request.ended.then((end) => wallClock(end.atMs)));
      return { hang: true };
    });
    const modelAborts = (count: number) => {
      modelEnds.clear();
      return disconnectAll({
        clients,
        baseUrl,
        servicePid: pid,
        count,
        ready: () => modelEnds.size >= count,
        ends: (label) => [modelEnds.get(label) ?? Promise.resolve(Number.NaN)],
      });
    };
    await modelAborts(WARMUP_ABORTS); // the cancellation path runs warm, like the rest
    const modelAbort = await profiled(pid, inspectPort, DISCONNECT_PROFILE, () => rounds(() => modelAborts(ABORT_TURNS)));
    provider.setDefault((request) => ({
      calls: ['a', 'b'].map((part, index) => ({
        name: 'web_fetch',
        callId: `call_${index}`,
        arguments: JSON.stringify({ urls: [`http://127.0.0.1:${held.port}/${inputOf(request)}/${part}`] }),
      })),
    }));
    const toolAborts = (count: number) => {
      const before = held.arrived();
      return disconnectAll({
        clients,
        baseUrl,
        servicePid: pid,
        count,
        ready: () => held.arrived() - before >= 2 * count,
        ends: (label) => ['a', 'b'].map((part) => held.closed(`/${label}/${part}`)),
      });
    };
    await toolAborts(WARMUP_ABORTS);
    const toolAbort = await rounds(() => toolAborts(ABORT_TURNS));
    // The floor: the same clients leaving the holding server itself, with no service between.
    const floor = await rounds(() => {
      const heldBefore = held.arrived();
      return disconnectAll({
        clients,
        baseUrl,
        servicePid: pid,
        count: ABORT_TURNS,
        start: (label) => ({ label, url: `http://127.0.0.1:${held.port}/floor/${label}` }),
        ready: () => held.arrived() - heldBefore >= ABORT_TURNS,
        ends: (label) => [held.closed(`/floor/${label}`)],
      });
    });
    clients.close();
    console.log(`\nclient disconnect → abort, ${ABORT_TURNS} turns leaving at once, ${ABORT_ROUNDS} times (target p99 < ${ABORT_TARGET_MS} ms):`);
    for (const [what, latencies] of [
      ['model request closed at the provider', modelAbort],
      ['both running tools\' requests closed', toolAbort],
      ['floor, the same clients leaving a held request with no service between', floor],
    ] as const) {
      const p99 = median(latencies.map((one) => percentile(one, 0.99)));
      const met = what.startsWith('floor') || p99 < ABORT_TARGET_MS ? '' : ' ✗';
      console.log(`  ${what}: p50 ${median(latencies.map((one) => percentile(one, 0.5))).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms ${spread(latencies, 0.99)}${met}`);
    }
  } finally {
    service.kill('SIGTERM');
    if (service.exitCode === null && service.signalCode === null) await once(service, 'exit');
    await provider.close();
    await held.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function turnBody(agentId: string, input: string, tools: Record<string, boolean> = { computer: true }): string {
  return JSON.stringify({ agent: { id: agentId, tools }, input, model: { name: 'gpt-5.1' } });
}

/** The user's input of the request: the label of its turn. */
function inputOf(request: FakeRequest): string {
  const input = request.body.input;
  const first: unknown = Array.isArray(input) ? input[0] : undefined;
  const content = typeof first === 'object' && first !== null && 'content' in first ? first.content : undefined;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const part: unknown = content[0];
    if (typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string') return part.text;
  }
  return '';
}

async function streamTurn(baseUrl: string, body: string, signal?: AbortSignal): Promise<string> {
  const response = await fetch(`${baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body, ...(signal === undefined ? {} : { signal }) });
  const text = await response.text();
  return text.includes('event: turn.completed') ? 'completed' : text.slice(-300);
}

/**
 * Starts `count` turns (from the clients' own process, see disconnect-clients.ts), waits until
 * `ready()` (their work is in flight), then has every client leave at once; returns, per turn,
 * the milliseconds from its client's leaving to the last of its `ends` (wall-clock times:
 * the clients' and this process's).
 */
async function disconnectAll(options: {
  clients: DisconnectClients;
  baseUrl: string;
  /** The service's pid: the clients leave once it has gone quiet (every turn waiting, nothing left to do). */
  servicePid: number;
  count: number;
  /** What each client asks for: a streaming turn by default. */
  start?: (label: string) => { label: string; body?: string; url?: string };
  ready: () => boolean;
  ends: (label: string) => Promise<number>[];
}): Promise<number[]> {
  const run = Date.now().toString(36);
  const labels = Array.from({ length: options.count }, (_, index) => `abort-${run}-${index}`);
  const start = options.start ?? ((label: string) => ({ label, body: turnBody(label, label, { web: true }) }));
  await options.clients.send({ start: labels.map(start) });
  for (let waited = 0; !options.ready(); waited += 10) {
    if (waited > 60_000) throw new Error('the turns never got their work in flight');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await untilQuiet(options.servicePid);
  const { left } = (await options.clients.send({ leave: true })) as { left: Record<string, number> };
  return Promise.all(
    labels.map(async (label) => {
      const ends = await Promise.all(options.ends(label));
      const latency = Math.max(...ends) - (left[label] ?? Number.NaN);
      // A request closed before its client left (beyond the two processes' clocks' disagreement)
      // was closed by something else, a timeout: not a figure of this bench.
      if (!(latency > -5)) throw new Error(`the work of ${label} ended ${(-latency).toFixed(0)} ms before its client left`);
      return latency;
    }),
  );
}

/** Runs one crowd's leaving `ABORT_ROUNDS` times, one after the other; the latencies of each. */
async function rounds(leave: () => Promise<number[]>): Promise<number[][]> {
  const each: number[][] = [];
  for (let round = 0; round < ABORT_ROUNDS; round += 1) each.push(await leave());
  return each;
}

/** `(rounds from … to …)`: the lowest and highest of the rounds' percentile `p`. */
function spread(rounds: readonly (readonly number[])[], p: number): string {
  const each = rounds.map((one) => percentile(one, p));
  return `(rounds ${Math.min(...each).toFixed(1)}–${Math.max(...each).toFixed(1)})`;
}

/** Waits until the process used under 5% of a core over 200 ms (at most 30 s). */
async function untilQuiet(pid: number): Promise<void> {
  for (let tries = 0; tries < 150; tries += 1) {
    const before = await processCpuMs(pid);
    await new Promise((resolve) => setTimeout(resolve, 200));
    if ((await processCpuMs(pid)) - before < 10) return;
  }
}

interface DisconnectClients {
  /** Sends one command, resolves with its answer line. */
  send(command: object): Promise<unknown>;
  close(): void;
}

function startDisconnectClients(baseUrl: string): DisconnectClients {
  const child = spawnNode('bench/disconnect-clients.ts', [baseUrl], {});
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    send: async (command) => {
      child.stdin!.write(`${JSON.stringify(command)}\n`);
      const answer = await lines.next();
      if (answer.done === true) throw new Error('the disconnecting clients exited');
      return JSON.parse(answer.value) as unknown;
    },
    close: () => {
      child.stdin!.end();
    },
  };
}

/** This process's performance.now() as wall-clock milliseconds, comparable with the clients' process. */
function wallClock(monotonicMs: number): number {
  return performance.timeOrigin + monotonicMs;
}

/** A server that takes requests and never answers; it notes when each one's connection closes. */
async function startHoldingServer(): Promise<{ port: number; arrived: () => number; closed: (url: string) => Promise<number>; close: () => Promise<void> }> {
  const closes = new Map<string, { promise: Promise<number>; resolve: (at: number) => void }>();
  const entry = (url: string) => {
    let found = closes.get(url);
    if (found === undefined) {
      let resolve: (at: number) => void = () => undefined;
      const promise = new Promise<number>((done) => {
        resolve = done;
      });
      found = { promise, resolve };
      closes.set(url, found);
    }
    return found;
  };
  let arrived = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    arrived += 1;
    const waiting = entry(request.url ?? '');
    // Timed when the close is first read, not at `close`: the bench times the service, not this
    // process's handling of hundreds of closing sockets.
    const closedAt = noteClientClose(request, response);
    response.on('close', () => {
      waiting.resolve(wallClock(closedAt() ?? performance.now()));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    arrived: () => arrived,
    closed: (url) => entry(url).promise,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One unlabelled series of the service's `/metrics` (prom-client's process metrics among them). */
async function scrapeMetric(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** The service's memory as its process metrics give it, in KB: V8's heap used and allocated, and memory outside it. */
async function memoryKb(baseUrl: string): Promise<{ heapUsed: number; heapTotal: number; external: number; newSpace: number; oldSpace: number }> {
  const [heapUsed, heapTotal, external, newSpace, oldSpace] = await Promise.all(
    [
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_external_memory_bytes',
      'nodejs_heap_space_size_total_bytes{space="new"}',
      'nodejs_heap_space_size_total_bytes{space="old"}',
    ].map(async (name) => (await scrapeMetric(baseUrl, name)) / 1024),
  );
  return { heapUsed: heapUsed ?? Number.NaN, heapTotal: heapTotal ?? Number.NaN, external: external ?? Number.NaN, newSpace: newSpace ?? Number.NaN, oldSpace: oldSpace ?? Number.NaN };
}

/** The service's event-loop delay p99 in ms, since the previous scrape (prom-client resets it on each). */
async function scrapeEventLoopP99(baseUrl: string): Promise<number> {
  return (await scrapeMetric(baseUrl, 'nodejs_eventloop_lag_p99_seconds')) * 1000;
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) await runLoadBench();
