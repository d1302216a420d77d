/**
 * The launcher thread (see command-launcher.ts): runs each command it is sent with
 * runCommandProcess, aborts it when told, empties and removes its cgroups once it ended, and
 * answers with its result.
 *
 * Spawns are paced, one per turn of this thread's event loop: a spawn holds the thread for a
 * few milliseconds, and a crowd of commands started together would otherwise all be spawned
 * before any cancel that arrived meanwhile is read. A cancel waits for at most one spawn, and
 * one for a command still waiting to be spawned means it never is.
 */
import { parentPort } from 'node:worker_threads';
import { systemClock } from '../clock.js';
import { CommandSandboxError } from './command-sandbox.js';
import type { FromLauncher, LaunchRequest, ToLauncher } from './command-launcher.js';
import { commandCgroupAt } from './pids-cgroup.js';
import { runCommandProcess } from './run-command-process.js';

const port = parentPort;
if (port === null) throw new Error('command-launcher-worker runs as a worker thread');
const aborts = new Map<number, AbortController>();
const waiting: { readonly id: number; readonly request: LaunchRequest }[] = [];
let pacing = false;
const send = (message: FromLauncher): void => {
  port.postMessage(message);
};

port.on('message', (message: ToLauncher) => {
  if (message.type === 'abort') {
    aborts.get(message.id)?.abort(message.reason);
    return;
  }
  const controller = new AbortController();
  aborts.set(message.id, controller);
  if (message.request.abortedBecause !== undefined) controller.abort(message.request.abortedBecause);
  waiting.push({ id: message.id, request: message.request });
  paceSpawns();
});

/** Starts the next waiting command, then lets the event loop read its messages before the one after. */
function paceSpawns(): void {
  if (pacing) return;
  const next = waiting.shift();
  if (next === undefined) return;
  pacing = true;
  void run(next.id, next.request);
  setImmediate(() => {
    pacing = false;
    paceSpawns();
  });
}

async function run(id: number, request: LaunchRequest): Promise<void> {
  const controller = aborts.get(id) ?? new AbortController();
  const cgroups = request.cgroups.map(commandCgroupAt);
  try {
    const result = await runCommandProcess({
      file: request.file,
      args: request.args,
      env: request.env,
      cwd: request.cwd,
      inputs: request.inputs.map((input) => (input instanceof Uint8Array ? Buffer.from(input.buffer, input.byteOffset, input.byteLength) : input)),
      inheritedFds: request.inheritedFds,
      timeoutMs: request.timeoutMs,
      signal: controller.signal,
      outputLimitBytes: request.outputLimitBytes,
      cgroups,
      pidNamespace: request.pidNamespace,
      clock: systemClock,
      onSpawn: (pid) => {
        send({ type: 'spawned', id, pid });
      },
    });
    // Emptied and removed here, at once: a removed group had no task left, which is what
    // allGone says. The caller's own removal then finds them gone.
    await Promise.all(cgroups.map((cgroup) => cgroup.killAll()));
    const removed = await Promise.all(cgroups.map((cgroup) => cgroup.remove()));
    send({ type: 'ended', id, result: cgroups.length === 0 ? result : { ...result, allGone: removed.every(Boolean) } });
  } catch (error) {
    send({ type: 'failed', id, message: error instanceof Error ? error.message : String(error), sandboxError: error instanceof CommandSandboxError });
  } finally {
    aborts.delete(id);
  }
}
