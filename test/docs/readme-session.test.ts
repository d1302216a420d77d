import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks, type FencedBlock } from '../support/markdown.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

/**
 * The README's curl session, run verbatim against the real service: every `sh` block that calls
 * `$BASE` runs in one bash session (so `TURN` and the saved headers carry from block to block),
 * and what it prints is held to the `text` block the README shows after it: the HTTP statuses,
 * the event types in order, and every `"status"`, `"code"`, `"reason"` and `"outcome"` it names.
 * The one block that needs a server with `API_TOKEN` runs against a second service that has one.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const TOKEN = 'readme-session-token-0123456789';

interface SessionBlock {
  readonly command: FencedBlock;
  readonly shown: FencedBlock;
  readonly needsToken: boolean;
}

function sessionBlocks(readme: string): SessionBlock[] {
  const blocks = fencedBlocks(readme);
  const session: SessionBlock[] = [];
  for (const [index, block] of blocks.entries()) {
    if (block.info !== 'sh' || !block.body.includes('$BASE')) continue;
    const shown = blocks[index + 1];
    if (shown?.info !== 'text') throw new Error(`README.md:${String(block.line)}: a curl block with no \`text\` block after it showing what it prints`);
    session.push({ command: block, shown, needsToken: block.body.includes('$API_TOKEN') });
  }
  return session;
}

/** What a test can hold a run to: statuses, event types, and the named values, in order. */
function landmarks(text: string): { statuses: string[]; events: string[]; values: string[] } {
  const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => match[1] ?? '');
  const events = [...text.matchAll(/^event: (\S+)$|^\{"type":"([a-z_.]+)"/gm)].map((match) => match[1] ?? match[2] ?? '');
  const values = [...text.matchAll(/"(status|code|reason|outcome)":"([^"…]+)"/g)].map((match) => `${match[1] ?? ''}=${match[2] ?? ''}`);
  return { statuses, events, values };
}

function isSubsequence(wanted: readonly string[], actual: readonly string[]): boolean {
  let at = 0;
  for (const item of actual) if (item === wanted[at]) at += 1;
  return at === wanted.length;
}

function runBash(script: string, options: { readonly cwd: string; readonly env: Record<string, string> }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: options.cwd, env: { PATH: process.env['PATH'] ?? '', HOME: options.cwd, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the README curl session', () => {
  let open: ServiceProcess | undefined;
  let guarded: ServiceProcess | undefined;
  let workDir = '';

  beforeAll(async () => {
    [open, guarded] = await Promise.all([
      startServiceProcess({ instanceId: 'readme-open' }),
      startServiceProcess({ instanceId: 'readme-token', env: { API_TOKEN: TOKEN } }),
    ]);
    workDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-readme-'));
  }, 90_000);

  afterAll(async () => {
    await Promise.all([open?.stop(), guarded?.stop()]);
    if (workDir !== '') await rm(workDir, { recursive: true, force: true });
  });

  it('starts where a new user starts: BASE names the default address', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    expect(fencedBlocks(readme).some((block) => block.info === 'sh' && block.body.trim() === 'export BASE=http://127.0.0.1:8080')).toBe(true);
  });

  it('runs every block as written and prints what the README shows', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = sessionBlocks(readme);
    // start a turn and watch it, read it back, cancel one, fail one, and use a token
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const marker = (index: number): string => `@@readme-block-${String(index)}@@`;
    const script = [
      'set -euo pipefail',
      ...blocks.flatMap((block, index) => [
        `export BASE=${block.needsToken ? guarded!.baseUrl : open!.baseUrl}`,
        `echo '${marker(index)}'`,
        `echo '${marker(index)}' >&2`,
        block.command.body,
      ]),
    ].join('\n');
    const run = await runBash(script, { cwd: workDir, env: { API_TOKEN: TOKEN } });
    expect(run.stderr).not.toMatch(/curl: \(\d+\)/);
    expect(run.code).toBe(0);

    for (const [index, block] of blocks.entries()) {
      const start = run.stdout.indexOf(marker(index));
      const end = index + 1 < blocks.length ? run.stdout.indexOf(marker(index + 1)) : run.stdout.length;
      expect(start, `README.md:${String(block.command.line)} did not run`).toBeGreaterThanOrEqual(0);
      const printed = run.stdout.slice(start + marker(index).length, end);
      const shown = landmarks(block.shown.body);
      const actual = landmarks(printed);
      const where = `README.md:${String(block.command.line)} printed:\n${printed.slice(0, 4_000)}`;
      // A block shows its statuses (curl -i) where they matter; those must be what it printed.
      if (shown.statuses.length > 0) expect(actual.statuses, where).toEqual(shown.statuses);
      expect(isSubsequence(shown.events, actual.events), `${where}\nshown events: ${shown.events.join(', ')}`).toBe(true);
      expect(actual.events.at(-1), where).toBe(shown.events.at(-1));
      expect(isSubsequence(shown.values, actual.values), `${where}\nshown values: ${shown.values.join(', ')}`).toBe(true);
    }
  }, 120_000);

  it('holds a run to what the README shows (the matcher itself)', () => {
    const shown = landmarks('HTTP/1.1 202 Accepted\n…\n{"status":"cancelled","error":{"code":"cancelled","reason":"cancel_requested"}}\nevent: turn.started\n…\nevent: turn.cancelled\n');
    expect(shown).toEqual({ statuses: ['202'], events: ['turn.started', 'turn.cancelled'], values: ['status=cancelled', 'code=cancelled', 'reason=cancel_requested'] });
    expect(isSubsequence(['a', 'c'], ['a', 'b', 'c'])).toBe(true);
    expect(isSubsequence(['c', 'a'], ['a', 'b', 'c'])).toBe(false);
  });
});
