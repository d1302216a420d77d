import { randomUUID } from 'node:crypto';
import { readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a group's removal waits for its killed tasks to leave. */
const REMOVE_PATIENCE_MS = 2_000;

/** A cgroup folder under which this service may create one child group per command. */
export interface PidsCgroupParent {
  readonly directory: string;
  readonly version: 1 | 2;
}

/** Where a command's cgroup is (its folder and hierarchy): enough to act on it from another thread (see `commandCgroupAt`). */
export type CommandCgroupPlace = PidsCgroupParent;

/** The cgroup one command runs in: at most `maxProcesses` tasks alive at once. */
export interface CommandCgroup {
  readonly place: CommandCgroupPlace;
  /** Writing a pid here moves that process (and its future children) into the group. */
  readonly procsFile: string;
  /** SIGKILLs every task still in the group (those that left the process group included). */
  killAll(): Promise<void>;
  /** Removes the group once its tasks are gone; gives up quietly after about two seconds. */
  remove(): Promise<boolean>;
}

export type PidsCgroupProbe =
  | { readonly usable: true; readonly parent: PidsCgroupParent }
  | { readonly usable: false; readonly reason: string };

/**
 * Finds the `pids` controller for this process's own cgroup and proves a child group can
 * be made there (root on cgroup v1, or a delegated cgroup v2 subtree with `pids` enabled).
 * It never enables controllers or moves this process: a cgroup it cannot use as found is
 * reported unusable.
 */
export function probePidsCgroup(): Promise<PidsCgroupProbe> {
  return probeCgroupController({ controller: 'pids', limitFile: 'pids.max', probeValue: '64' });
}

/** The same proof for any controller: a child group can be made and its limit file written. */
export async function probeCgroupController(options: { controller: string; limitFile: string; probeValue: string }): Promise<PidsCgroupProbe> {
  let membership: string;
  let mountInfo: string;
  try {
    [membership, mountInfo] = await Promise.all([readFile('/proc/self/cgroup', 'utf8'), readFile('/proc/self/mountinfo', 'utf8')]);
  } catch {
    return { usable: false, reason: 'cgroups cannot be read here' };
  }
  const parent = locateCgroup({ membership, mountInfo, controller: options.controller });
  if (parent === undefined) return { usable: false, reason: `no ${options.controller} cgroup controller is available to this process` };
  const probe = path.join(parent.directory, `turn-runtime-probe-${randomUUID()}`);
  try {
    await mkdir(probe);
  } catch (error) {
    return { usable: false, reason: `cannot create a cgroup under ${parent.directory} (${errorCode(error)})` };
  }
  try {
    await writeFile(path.join(probe, options.limitFile), options.probeValue);
    return { usable: true, parent };
  } catch (error) {
    return { usable: false, reason: `cannot set ${options.limitFile} under ${parent.directory} (${errorCode(error)})` };
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

/** Creates the group for one command; the caller moves the command in through `procsFile`. */
export function createCommandCgroup(options: { parent: PidsCgroupParent; maxProcesses: number }): Promise<CommandCgroup> {
  return createLimitedCgroup({ parent: options.parent, limits: [['pids.max', String(options.maxProcesses)]] });
}

/** Creates a child group of `parent` with the given limit files written, in order. */
export async function createLimitedCgroup(options: {
  parent: PidsCgroupParent;
  limits: readonly (readonly [string, string])[];
  /** Limit files that this kernel may lack (swap accounting off): skipped when absent. */
  optional?: readonly string[];
}): Promise<CommandCgroup> {
  const directory = path.join(options.parent.directory, `turn-runtime-${randomUUID()}`);
  await mkdir(directory);
  try {
    for (const [file, value] of options.limits) {
      await writeFile(path.join(directory, file), value).catch((error: unknown) => {
        if (options.optional?.includes(file) === true && errorCode(error) === 'ENOENT') return;
        throw error;
      });
    }
  } catch (error) {
    await rmdir(directory).catch(() => undefined);
    throw error;
  }
  return commandCgroupAt({ directory, version: options.parent.version });
}

/** The cgroup made at `place` (by createLimitedCgroup, possibly in another thread), to kill its tasks or remove it. */
export function commandCgroupAt(place: CommandCgroupPlace): CommandCgroup {
  const { directory } = place;
  const procsFile = path.join(directory, 'cgroup.procs');

  // cgroupfs lives in memory and answers at once: its files are read and written synchronously,
  // not through the thread pool, where a command's kill would queue behind other turns' file work.
  const killAll = async (): Promise<void> => {
    if (place.version === 2) {
      // cgroup.kill (Linux 5.14+) kills the whole group atomically, even while it forks.
      try {
        writeFileSync(path.join(directory, 'cgroup.kill'), '1');
        return;
      } catch {
        // An older kernel, or the group is gone: the loop below sees which.
      }
    }
    // Without cgroup.kill a forking group may add tasks while we read: repeat until it is empty.
    for (let round = 0; round < 20; round += 1) {
      const pids = readPids(procsFile);
      if (pids.length === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await sleep(5);
    }
  };

  const remove = async (): Promise<boolean> => {
    // Killed tasks leave the group asynchronously, so rmdir may see EBUSY for a moment: tried
    // again soon at first (they are usually gone within a millisecond or two), then every 50 ms.
    for (let waitedMs = 0, delayMs = 1; waitedMs < REMOVE_PATIENCE_MS; waitedMs += delayMs, delayMs = Math.min(50, delayMs * 2)) {
      try {
        rmdirSync(directory);
        return true;
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return true;
        if (errorCode(error) !== 'EBUSY') return false;
        await sleep(delayMs);
      }
    }
    return false;
  };

  return { place, procsFile, killAll, remove };
}

/** The directory of this process's pids cgroup, from /proc/self/cgroup and mountinfo. */
export function locatePidsCgroup(membership: string, mountInfo: string): PidsCgroupParent | undefined {
  return locateCgroup({ membership, mountInfo, controller: 'pids' });
}

/** The directory of this process's cgroup for `controller` (a v1 hierarchy that has it, else the unified one). */
export function locateCgroup(options: { membership: string; mountInfo: string; controller: string }): PidsCgroupParent | undefined {
  const { membership, mountInfo, controller } = options;
  const memberships = membership
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [hierarchy = '', controllers = '', ...rest] = line.split(':');
      return { hierarchy, controllers: controllers.split(','), path: rest.join(':') };
    });
  const mounts = mountInfo
    .split('\n')
    .filter((line) => line !== '')
    .map(parseMountLine)
    .filter((mount) => mount !== undefined);

  const v1 = memberships.find((entry) => entry.controllers.includes(controller));
  if (v1 !== undefined) {
    const mount = mounts.find((entry) => entry.fsType === 'cgroup' && entry.superOptions.split(',').includes(controller));
    const directory = mount === undefined ? undefined : joinCgroupPath(mount, v1.path);
    return directory === undefined ? undefined : { directory, version: 1 };
  }
  const v2 = memberships.find((entry) => entry.hierarchy === '0' && entry.controllers.join('') === '');
  const mount = mounts.find((entry) => entry.fsType === 'cgroup2');
  if (v2 === undefined || mount === undefined) return undefined;
  const directory = joinCgroupPath(mount, v2.path);
  return directory === undefined ? undefined : { directory, version: 2 };
}

interface MountLine {
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly superOptions: string;
}

function parseMountLine(line: string): MountLine | undefined {
  const fields = line.split(' ');
  const separator = fields.indexOf('-');
  const root = fields[3];
  const mountPoint = fields[4];
  const fsType = fields[separator + 1];
  const superOptions = fields[separator + 3];
  if (separator < 0 || root === undefined || mountPoint === undefined || fsType === undefined || superOptions === undefined) {
    return undefined;
  }
  return { root: unescapeMountPath(root), mountPoint: unescapeMountPath(mountPoint), fsType, superOptions };
}

/** The cgroup path seen in /proc/self/cgroup, under the folder where its hierarchy is mounted. */
function joinCgroupPath(mount: MountLine, cgroupPath: string): string | undefined {
  const relative = path.posix.relative(mount.root, cgroupPath);
  if (relative.startsWith('..')) return undefined;
  return path.join(mount.mountPoint, relative);
}

function unescapeMountPath(value: string): string {
  return value.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

function readPids(procsFile: string): number[] {
  let text: string;
  try {
    text = readFileSync(procsFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : String(error);
}
