import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Another process on the host swapping `home/<folder>` for a link to `outside` and back, as
 * fast as it can: the attacker of the path-race tests. Its own process group, so it can be
 * killed whole.
 */
export function startFolderSwapper(options: { readonly home: string; readonly folder: string; readonly outside: string }): ChildProcess {
  const { folder } = options;
  const loop = `cd '${options.home}' && while :; do mv ${folder} ${folder}.real && ln -s '${options.outside}' ${folder} && rm ${folder} && mv ${folder}.real ${folder}; done`;
  return spawn('sh', ['-c', loop], { stdio: 'ignore', detached: true });
}

/** Kills the swapping shell and the mv/ln it may be running, and waits until they are gone. */
export async function stopFolderSwapper(running: ChildProcess | undefined): Promise<void> {
  if (running?.pid === undefined || running.exitCode !== null || running.signalCode !== null) return;
  const exited = new Promise((resolve) => running.once('exit', resolve));
  try {
    process.kill(-running.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
  await exited;
  // A child of the group may outlive the shell by a moment.
  await new Promise((resolve) => setTimeout(resolve, 50));
}
