/**
 * Fault scenario (issue 8, item 1): 50 concurrent turns that each run a command in the
 * bubblewrap sandbox, 300 turns in all, against the compiled service in its own process.
 * Once, about 16 such turns ran the service out of file descriptors and crashed it. Prints
 * whether the process survived, how many turns were stored completed, and the peak number
 * of open descriptors of the service process. Exits non-zero if it did not survive or lost a turn.
 */
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, runConcurrently, spawnNode, waitForHealth } from '../bench-support.js';

const CONCURRENCY = 50;
const TURNS = 300;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const dataDir = await mkdtemp(path.join(tmpdir(), 'fault-command-turns-'));
await chmod(dataDir, 0o711);
const port = await freePort();
const baseUrl = `http://127.0.0.1:${String(port)}`;
const server = spawnNode(path.join(root, 'dist/src/server.js'), [], { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', MAX_CONCURRENT_TURNS: '64' });
server.stdout?.resume();
let exited: string | undefined;
server.on('exit', (code, signal) => {
  exited = `exit ${String(code ?? signal)}`;
});
const pid = server.pid ?? 0;
const fdCount = async (): Promise<number> => (await readdir(`/proc/${String(pid)}/fd`).catch(() => [])).length;

try {
  await waitForHealth(baseUrl);
  const startFds = await fdCount();
  let peakFds = startFds;
  const sampler = setInterval(() => {
    void fdCount().then((count) => {
      peakFds = Math.max(peakFds, count);
    });
  }, 20);
  const ids: string[] = [];
  let requestErrors = 0;
  const started = Date.now();
  await runConcurrently(TURNS, CONCURRENCY, async (index) => {
    try {
      const response = await fetch(`${baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          agent: { id: `fault-${String(index % CONCURRENCY)}`, tools: { computer: true } },
          input: 'run it',
          model: { script: [{ calls: [{ name: 'run_command', arguments: { command: `seq 1 2000 | sort -r | head -3; echo ${String(index)} > n.txt` } }] }, { text: 'done' }] },
        }),
      });
      const body = (await response.json()) as { id?: string };
      if (typeof body.id === 'string') ids.push(body.id);
      else requestErrors += 1;
    } catch {
      requestErrors += 1;
    }
  });
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  let stored = 0;
  let commandsOk = 0;
  for (const id of ids) {
    const record = (await (await fetch(`${baseUrl}/turns/${id}`)).json()) as { status?: string };
    if (record.status === 'completed') stored += 1;
    const events = await (await fetch(`${baseUrl}/turns/${id}/events`, { headers: { accept: 'application/x-ndjson' } })).text();
    if (events.includes('"type":"tool.completed"') && events.includes('exit code: 0')) commandsOk += 1;
  }
  const alive = exited === undefined && (await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false));
  console.log(`command turns: ${String(TURNS)} at ${String(CONCURRENCY)} concurrent in ${seconds.toFixed(1)} s`);
  console.log(`  survived: ${alive ? 'yes' : `NO (${exited ?? 'no answer'})`}`);
  console.log(`  stored completed: ${String(stored)} / ${String(TURNS)} (request errors ${String(requestErrors)})`);
  console.log(`  commands that ran and exited 0: ${String(commandsOk)} / ${String(TURNS)}`);
  console.log(`  open fds of the service: ${String(startFds)} at start, peak ${String(peakFds)}`);
  process.exitCode = alive && stored === TURNS ? 0 : 1;
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 500));
  await rm(dataDir, { recursive: true, force: true });
}
