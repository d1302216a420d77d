import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Where the service's own Node.js binary appears inside a bubblewrap sandbox. Its folder comes
 * first on a command's PATH, so `node`, and every `#!/usr/bin/env node` script (npm, npx,
 * mcporter, an MCP server a skill starts), runs on the Node the service runs on, wherever that
 * is installed on the host, instead of whatever /usr/bin/node the host may also have.
 */
export const SANDBOX_NODE_FOLDER = '/opt/turn-runtime/node/bin';
export const SANDBOX_NODE = `${SANDBOX_NODE_FOLDER}/node`;

/** The host user bwrap runs as, when it is not the service's own. */
interface HostUser {
  readonly uid: number;
  readonly gid: number;
}

export type ServiceNode = { readonly hostPath: string; readonly reason?: undefined } | { readonly hostPath: undefined; readonly reason: string };

/**
 * Finds the binary of the Node.js running the service (symlinks resolved) and checks that the
 * host user bwrap runs as can reach it: bwrap binds it as that user, so a binary below a
 * folder it cannot search (a Node installed under /root, with the service root and commands
 * run as nobody) would make every command fail. Then commands get no Node of the service's,
 * and the reason says why.
 */
export async function findServiceNode(options: { readonly execPath: string; readonly user: HostUser | undefined }): Promise<ServiceNode> {
  let binary: string;
  try {
    binary = await realpath(options.execPath);
  } catch (error) {
    return { hostPath: undefined, reason: `its binary ${options.execPath} cannot be found (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  const { user } = options;
  // bwrap as the service's own user reaches whatever runs the service.
  if (user === undefined) return { hostPath: binary };
  const folders: string[] = [];
  for (let folder = path.dirname(binary); ; folder = path.dirname(folder)) {
    folders.unshift(folder);
    if (path.dirname(folder) === folder) break;
  }
  for (const folder of folders) {
    if (!(await allows(folder, user, SEARCH))) return { hostPath: undefined, reason: `uid ${String(user.uid)} cannot search ${folder}, above its binary ${binary}` };
  }
  if (!(await allows(binary, user, READ | SEARCH))) return { hostPath: undefined, reason: `uid ${String(user.uid)} cannot read and run its binary ${binary}` };
  return { hostPath: binary };
}

const READ = 4;
const SEARCH = 1;

/** Whether the owner, group or other bits that apply to `user` grant `wanted` (setpriv clears the supplementary groups). */
async function allows(file: string, user: HostUser, wanted: number): Promise<boolean> {
  const stats = await stat(file).catch(() => undefined);
  if (stats === undefined) return false;
  const shift = stats.uid === user.uid ? 6 : stats.gid === user.gid ? 3 : 0;
  return ((stats.mode >> shift) & wanted) === wanted;
}
