import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export const silentLogger: Logger = pino({ level: 'silent' });

/** A logger whose records the test can read back. */
export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export function capturingLogger(): { logger: Logger; records: () => LogRecord[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level: 'info' }, stream);
  return { logger, records: () => lines.flatMap((line) => line.split('\n')).filter((line) => line !== '').map((line) => JSON.parse(line) as LogRecord) };
}

/** A fresh agent home; removed by the returned cleanup. */
export async function makeHome(): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'turn-runtime-home-'));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

/** Host pids of the processes whose command line contains `marker`. */
export async function hostPidsWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

/** Polls until `check` is true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A marker no other process on the machine carries. */
export function uniqueMarker(prefix: string): string {
  return `${prefix}-${String(process.pid)}-${Math.random().toString(36).slice(2, 10)}`;
}
