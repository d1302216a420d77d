import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { chown, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { HomePathError } from '../home-path-error.js';
import { FolderDescriptor, HomeFolder } from './home-folder.js';
import { syncCall } from './sync-call.js';

/** Where commands see the home; an absolute link written inside the sandbox points there. */
const HOME_INSIDE_SANDBOX = '/home/agent';
/** As Linux's MAXSYMLINKS. */
const MAX_LINK_HOPS = 40;
/** A component swapped while it is opened is looked at again this many times. */
const MAX_RETRIES = 8;

/** Who new folders and files belong to: the sandbox user when the service is root. */
export interface HomeOwner {
  readonly uid: number;
  readonly gid: number;
}

export interface OpenHomePathOptions {
  readonly home: string;
  /** The path exactly as the model gave it. */
  readonly requested: string;
  /** Follow a symbolic link in the last place (to a target inside the home). Links in folders are always followed. */
  readonly followLast: boolean;
}

/**
 * A path of the agent home, resolved without trusting any path string: from an open
 * descriptor of the home, one component at a time, each folder opened with
 * `O_DIRECTORY | O_NOFOLLOW` through its parent's descriptor. Symbolic links are read and
 * resolved here, by the same rules (an absolute target or a `..` above the home is refused),
 * never by the kernel. What comes out is the open parent folder and the last name in it;
 * every read and write goes through `parent.entry(name)`, so nothing renamed or swapped
 * after the check can redirect it. Close it when done. The walk's calls are synchronous
 * (see sync-call.ts).
 */
export interface OpenHomePath {
  readonly realHome: string;
  /** The folder the last component is in (or, for the home itself, the home). */
  readonly parent: HomeFolder;
  /** The last component; '' when the path is the home itself. */
  readonly name: string;
  /** Relative to the home, symbolic links resolved ('.' for the home). */
  readonly display: string;
  /** lstat of what is there now; undefined when nothing is. */
  readonly stats: Stats | undefined;
  /** Folders still to create below `parent` before `name` can be made (a path into folders that do not exist yet). */
  readonly missingFolders: readonly string[];
  /** The path addressed through the parent's descriptor (valid until `close`). */
  readonly entry: string;
  /**
   * Creates the missing folders one by one, each through the descriptor of the one above,
   * given to `owner` when set; afterwards `parent` is the deepest and `missingFolders` empty.
   * Returns the folders it created, outermost first, for a rollback.
   */
  createFolders(owner: HomeOwner | undefined): Promise<{ folder: HomeFolder; name: string }[]>;
  close(): Promise<void>;
}

/** Resolves `requested` inside `home` (see `OpenHomePath`). Throws `HomePathError` for a path that would leave it. */
export async function openHomePath(options: OpenHomePathOptions): Promise<OpenHomePath> {
  const { requested } = options;
  const components = splitRequested(requested);
  const { realHome, handle: rootHandle } = await openHome(options.home);
  const root = new HomeFolder({ handle: rootHandle, display: '' });
  const stack: HomeFolder[] = [root];
  const opened: HomeFolder[] = [root];
  const closeAll = async (keep: readonly HomeFolder[]): Promise<void> => {
    for (const folder of opened) if (!keep.includes(folder)) await folder.close();
  };
  const top = (): HomeFolder => stack[stack.length - 1] ?? root;
  // Each component remembers whether a symbolic link produced it: a missing one then means a dangling link.
  const queue: { name: string; fromLink: boolean }[] = components.map((name) => ({ name, fromLink: false }));
  let hops = 0;
  let retries = 0;
  let throughLink = false;
  try {
    for (;;) {
      const item = queue.shift();
      if (item === undefined) {
        // The path is the home itself, or ended in `..` / a link to a folder: the folder is the target.
        const folder = top();
        const parent = stack[stack.length - 2];
        if (parent === undefined) return await finish({ parent: root, name: '', stats: await root.handle.stat(), missing: [] });
        const name = path.basename(folder.display);
        return await finish({ parent, name, stats: await lstatOrUndefined(parent.entry(name)), missing: [] });
      }
      const component = item.name;
      if (component === '..') {
        if (stack.length === 1) throw climbError(requested, throughLink);
        await stack.pop()?.close();
        continue;
      }
      const isLast = queue.length === 0;
      const folder = top();
      const stats = await lstatOrUndefined(folder.entry(component));
      if (stats === undefined) {
        const rest = [item, ...queue];
        if (rest.some((part) => part.fromLink)) throw new HomePathError(`"${requested}" is a symbolic link to something that does not exist`);
        if (rest.some((part) => part.name === '..')) throw Object.assign(new Error(`${folder.displayOf(component)} does not exist`), { code: 'ENOENT', syscall: 'open' });
        const names = rest.map((part) => part.name);
        return await finish({ parent: folder, name: names.at(-1) ?? component, stats: undefined, missing: names.slice(0, -1) });
      }
      if (stats.isSymbolicLink() && (!isLast || options.followLast)) {
        hops += 1;
        if (hops > MAX_LINK_HOPS) throw Object.assign(new Error('too many levels of symbolic links'), { code: 'ELOOP', syscall: 'open' });
        const target = await syncCall(() => readlinkSync(folder.entry(component)));
        const expanded = expandLink({ target, realHome, requested });
        if (expanded.absolute) {
          while (stack.length > 1) await stack.pop()?.close();
        }
        queue.unshift(...expanded.components.map((name) => ({ name, fromLink: true })));
        throughLink = true;
        continue;
      }
      if (isLast) return await finish({ parent: folder, name: component, stats, missing: [] });
      if (!stats.isDirectory()) {
        throw Object.assign(new Error(`${folder.displayOf(component)} is a file, not a folder`), { code: 'ENOTDIR', syscall: 'open' });
      }
      let child: HomeFolder | undefined;
      try {
        child = await folder.openFolder(component);
      } catch (error) {
        // Swapped between the lstat and the open: look at it again (it may now be a link to follow).
        retries += 1;
        if (retries > MAX_RETRIES || !isSwapError(error)) throw error;
        queue.unshift(item);
        continue;
      }
      opened.push(child);
      stack.push(child);
    }
  } catch (error) {
    await closeAll([]);
    throw error;
  }

  async function finish(result: { parent: HomeFolder; name: string; stats: Stats | undefined; missing: string[] }): Promise<OpenHomePath> {
    let parent = result.parent;
    let missing = result.missing;
    // The home itself needs no check: it is where the walk began.
    if (parent !== root && !(await parent.isInside(realHome))) throw new HomePathError(`"${requested}" leads outside the agent home`);
    await closeAll([parent]);
    const own = [parent];
    const lastName = result.name;
    const displayOf = (): string => {
      const folders = [parent.display, ...missing].filter((part) => part !== '');
      return [...folders, lastName].filter((part) => part !== '').join('/') || '.';
    };
    const resolved: OpenHomePath = {
      realHome,
      get parent() {
        return parent;
      },
      name: lastName,
      get display() {
        return displayOf();
      },
      stats: result.stats,
      get missingFolders() {
        return missing;
      },
      get entry() {
        return lastName === '' ? parent.path : parent.entry(lastName);
      },
      async createFolders(owner) {
        const created: { folder: HomeFolder; name: string }[] = [];
        for (const name of missing) {
          try {
            await mkdir(parent.entry(name), { mode: 0o755 });
            created.push({ folder: parent, name });
          } catch (error) {
            if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
          }
          const next = await parent.openFolder(name);
          if (owner !== undefined) await next.handle.chown(owner.uid, owner.gid);
          own.push(next);
          parent = next;
        }
        missing = [];
        return created;
      },
      async close() {
        for (const folder of own) await folder.close();
      },
    };
    return resolved;
  }
}

/**
 * The homes' real paths, as last resolved. The service makes each home and nothing inside a
 * sandbox can move it (it is the root of the command's mount), so its real path stays put;
 * every file tool call resolving it again was a visible share of a read's cost. A home no
 * longer at its remembered real path (removed, moved by the operator) fails the open and is
 * resolved afresh.
 */
const realHomes = new Map<string, string>();
const MAX_REMEMBERED_HOMES = 10_000;

async function openHome(home: string): Promise<{ realHome: string; handle: FolderDescriptor }> {
  const remembered = realHomes.get(home);
  if (remembered !== undefined) {
    const handle = await FolderDescriptor.open(remembered).catch(() => undefined);
    if (handle !== undefined) return { realHome: remembered, handle };
    realHomes.delete(home);
  }
  const realHome = await syncCall(() => realpathSync(home));
  const handle = await FolderDescriptor.open(realHome);
  if (realHomes.size >= MAX_REMEMBERED_HOMES) realHomes.clear();
  realHomes.set(home, realHome);
  return { realHome, handle };
}

/** Gives a newly made file or folder (by its descriptor-anchored path) to `owner`, when set. */
export async function giveTo(entry: string, owner: HomeOwner | undefined): Promise<void> {
  if (owner !== undefined) await chown(entry, owner.uid, owner.gid);
}

/** The requested path as components, after the checks that need no disk. */
function splitRequested(requested: string): string[] {
  if (requested.includes('\0')) throw new HomePathError('the path contains a NUL byte');
  const trimmed = requested.trim();
  if (trimmed === '') throw new HomePathError('the path is empty');
  if (path.isAbsolute(trimmed) || /^[A-Za-z]:[\\/]/.test(trimmed) || trimmed.startsWith('~')) {
    throw new HomePathError(`"${requested}" is absolute; give a path relative to the agent home`);
  }
  const components = trimmed.split('/').filter((part) => part !== '' && part !== '.');
  // `..` that climbs above the home in the text itself is refused before anything is opened.
  let depth = 0;
  for (const part of components) {
    depth += part === '..' ? -1 : 1;
    if (depth < 0) throw new HomePathError(`"${requested}" leads outside the agent home`);
  }
  return components;
}

/** A link's target as components to resolve next; absolute targets only when they name the home. */
function expandLink(options: { target: string; realHome: string; requested: string }): { components: string[]; absolute: boolean } {
  const { target, realHome, requested } = options;
  if (!path.isAbsolute(target)) return { components: target.split('/').filter((part) => part !== '' && part !== '.'), absolute: false };
  for (const base of [realHome, HOME_INSIDE_SANDBOX]) {
    if (target === base || target.startsWith(`${base}/`)) {
      return { components: target.slice(base.length).split('/').filter((part) => part !== '' && part !== '.'), absolute: true };
    }
  }
  throw new HomePathError(`"${requested}" leads outside the agent home through a symbolic link`);
}

function climbError(requested: string, throughLink: boolean): HomePathError {
  return new HomePathError(`"${requested}" leads outside the agent home${throughLink ? ' through a symbolic link' : ''}`);
}

async function lstatOrUndefined(entry: string): Promise<Stats | undefined> {
  try {
    return await syncCall(() => lstatSync(entry));
  } catch (error) {
    if (error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) return undefined;
    throw error;
  }
}

function isSwapError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error.code === 'ELOOP' || error.code === 'ENOTDIR' || error.code === 'ENOENT');
}
