import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import type { FakeRequest, FakeStep } from '../test/support/fake-responses-provider.js';

/** Read-file calls per model round, and model calls per turn, as the issue fixes them. */
export const READS_PER_ROUND = 4;
export const MODEL_CALLS_PER_TURN = 3;
export const BENCH_FILES = ['alpha.md', 'beta.md', 'gamma.md', 'delta.md'];

/** Real documentation, pinned by the lockfile: where the bench files' text comes from. */
const BENCH_TEXT_SOURCE = path.resolve(import.meta.dirname, '../node_modules/pino/docs/api.md');
const BENCH_FILE_CHARS = 3_400;

/**
 * What the bench file at `index` of BENCH_FILES holds: 3.4 KB of real prose and code (a slice of
 * pino's API documentation, a different one per file, a little longer for each). Real text, not
 * a line repeated: the service deflates the long texts of turns that wait on their model, and a
 * repeated line deflates 28 to 1 where real file reads deflate 2–3 to 1 (this text: 2.4 to 1).
 */
export async function benchFileText(index: number): Promise<string> {
  const source = await readFile(BENCH_TEXT_SOURCE, 'utf8');
  const start = 4_000 + index * (BENCH_FILE_CHARS + 100);
  return `# ${BENCH_FILES[index] ?? index}\n\n${source.slice(start, start + BENCH_FILE_CHARS + 34 * index)}`;
}

/**
 * The provider's side of a benchmark turn: four parallel read_file calls per round until
 * the conversation holds two rounds of outputs, then a final answer. Stateless: it reads the
 * request's own input, so the service and the plain loop get exactly the same answers.
 */
/** Which of its turn's model calls `request` is: 0 for the first, `MODEL_CALLS_PER_TURN - 1` for the last. */
export function benchRound(request: FakeRequest): number {
  const input = Array.isArray(request.body.input) ? (request.body.input as { type?: string }[]) : [];
  return input.filter((item) => item.type === 'function_call_output').length / READS_PER_ROUND;
}

export function benchStep(request: FakeRequest): FakeStep {
  const round = benchRound(request);
  if (round >= MODEL_CALLS_PER_TURN - 1) return { text: ['All four files', ' read twice; done.'], usage: { inputTokens: 900, outputTokens: 12 } };
  return {
    text: round === 0 ? ['Reading the files.'] : ['Reading them again.'],
    calls: BENCH_FILES.map((file, index) => ({ name: 'read_file', callId: `call_${round}_${index}`, arguments: JSON.stringify({ path: file }) })),
    usage: { inputTokens: 400, outputTokens: 60 },
  };
}

/** User + system CPU time of a process, in milliseconds, from /proc (what `top` counts). */
export async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

export async function waitForHealth(baseUrl: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer from ${baseUrl}`);
}

/** Runs `task` `count` times with at most `concurrency` at once; `slot` names the runner (0 … concurrency − 1). */
export async function runConcurrently(count: number, concurrency: number, task: (index: number, slot: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, slot) => {
      while (next < count) {
        const index = next;
        next += 1;
        await task(index, slot);
      }
    }),
  );
}

/**
 * Runs a script in its own Node process: compiled JavaScript as is, TypeScript through tsx.
 * `runtime` picks another Node and the folder its script paths (and tsx) resolve from; this
 * Node and the current folder otherwise.
 */
export function spawnNode(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  runtime?: { readonly node: string; readonly appDir: string },
): ChildProcess {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return spawn(runtime?.node ?? process.execPath, [...nodeArgs, ...loader, script, ...args], {
    ...(runtime === undefined ? {} : { cwd: runtime.appDir }),
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/**
 * The compiled service (`dist/src/server.js`, as production runs it; the bench scripts build
 * first) on a free port with the bench's settings: quiet logs, no model retries. `env` adds to
 * or overrides them; `provider` points the service at a fake Responses server.
 */
export async function spawnService(options: {
  readonly dataDir: string;
  readonly providerUrl?: string;
  readonly env?: Record<string, string>;
  readonly nodeArgs?: readonly string[];
  readonly runtime?: { readonly node: string; readonly appDir: string };
}): Promise<{ readonly service: ChildProcess; readonly baseUrl: string }> {
  const port = await freePort();
  const env: Record<string, string> = {
    DATA_DIR: options.dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    MODEL_MAX_RETRIES: '0',
    MAX_CONCURRENT_TURNS: '1000',
    ...(options.providerUrl === undefined ? {} : { OPENAI_BASE_URL: options.providerUrl, OPENAI_API_KEY: 'sk-bench' }),
    ...options.env,
  };
  return { service: spawnNode('dist/src/server.js', [], env, options.nodeArgs, options.runtime), baseUrl: `http://127.0.0.1:${port}` };
}
