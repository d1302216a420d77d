/**
 * Helpers of the scale benchmark that bench-support.ts does not have: the settings, an SSE
 * client on node:http (cheaper than fetch, so the client steals less CPU from what it
 * measures), and readers of /proc for process CPU, RSS and the machine's busy time.
 */
import { readdir, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';

export interface ScaleSettings {
  readonly concurrencies: readonly number[];
  /** Turns per step, one per concurrency. */
  readonly turns: readonly number[];
  readonly modelMs: number;
  readonly realModelMs: number;
  readonly replicas: number;
  readonly waitingTurns: number;
  readonly settleMs: number;
  readonly postgresUrl: string;
}

const numberList = (text: string): number[] =>
  text
    .split(',')
    .map((item) => Number(item.trim()))
    .filter((value) => Number.isFinite(value) && value > 0);

export function readSettings(env: NodeJS.ProcessEnv): ScaleSettings {
  const concurrencies = numberList(env['BENCH_SCALE_CONCURRENCY'] ?? '8,32,128,512');
  const turnsText = env['BENCH_SCALE_TURNS'];
  const given = turnsText === undefined ? [] : numberList(turnsText);
  // Default: every slot runs at least twice, and at least 120 turns.
  const turns = concurrencies.map((concurrency, index) => given[index] ?? given.at(-1) ?? Math.max(120, 2 * concurrency));
  return {
    concurrencies,
    turns,
    modelMs: Number(env['BENCH_SCALE_MODEL_MS'] ?? 200),
    realModelMs: Number(env['BENCH_SCALE_REAL_MODEL_MS'] ?? 2_000),
    replicas: Number(env['BENCH_SCALE_REPLICAS'] ?? 3),
    waitingTurns: Number(env['BENCH_SCALE_WAITING'] ?? 300),
    settleMs: Number(env['BENCH_SCALE_SETTLE_MS'] ?? 10_500),
    postgresUrl: env['BENCH_POSTGRES_URL'] ?? env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

export interface StreamedTurn {
  readonly events: number;
  readonly bytes: number;
  readonly latencyMs: number;
  readonly turnId: string;
  /** The turn waited for its agent first (`turn.queued`). */
  readonly queued: boolean;
  /** `completed`; else how it ended: `failed:<code>`, `cancelled`, `http <status>` or `no terminal event`. */
  readonly outcome: string;
}

/** POSTs a turn and reads its SSE stream to the end. */
export function postTurn(baseUrl: string, body: string): Promise<StreamedTurn> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/turns`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          bytes += chunk.length;
        });
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            events: text.match(/^event: /gm)?.length ?? 0,
            bytes,
            latencyMs: performance.now() - started,
            turnId: String(res.headers['turn-id'] ?? ''),
            queued: text.includes('event: turn.queued'),
            outcome: res.statusCode === 200 ? outcomeOf(text) : `http ${res.statusCode ?? 0}`,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function outcomeOf(text: string): string {
  if (text.includes('event: turn.completed')) return 'completed';
  if (text.includes('event: turn.cancelled')) return 'cancelled';
  const failed = /^event: turn\.failed\ndata: (.*)$/m.exec(text);
  if (failed === null) return 'no terminal event';
  const code = /"error":\{"code":"([^"]+)"/.exec(failed[1] ?? '')?.[1];
  return `failed: ${code ?? 'unknown'}`;
}

/** POSTs a turn and leaves its stream open; `abort` goes away (the service then cancels the turn). */
export function openTurn(baseUrl: string, body: string): { readonly abort: () => void; readonly settled: Promise<void> } {
  let abort = (): void => undefined;
  const settled = new Promise<void>((resolve) => {
    const req = request(`${baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.on('data', () => undefined);
      res.on('close', resolve);
      res.on('error', () => { resolve(); });
    });
    req.on('error', () => { resolve(); });
    req.on('close', resolve);
    req.end(body);
    abort = () => req.destroy();
  });
  return { abort: () => { abort(); }, settled };
}

/** Resident set size of a process, in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match === null ? 0 : Number(match[1]) * 1024;
}

/** CPU ms (user + system) of every process named `postgres`, by pid. */
export async function postgresCpuByPid(): Promise<Map<number, number>> {
  const result = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(open + 1, close);
      if (comm !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      result.set(Number(entry), ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // the process went away meanwhile
    }
  }
  return result;
}

/** The machine's CPU time from /proc/stat, in ms: busy (everything but idle and iowait) and total. */
export async function machineCpuMs(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  // guest and guest_nice are already inside user and nice.
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: ((total - idle) * 1000) / 100, total: (total * 1000) / 100 };
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A plain-text table: a header row, a rule, the rows; columns right-aligned except the first. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('-|-'), ...rows.map(line)].join('\n');
}

/** A number for a table: `digits` decimals, thousands grouped. */
export function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
