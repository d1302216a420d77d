import { access, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';

/** The unprivileged host user a root service starts bwrap as. */
export interface SandboxIdentity {
  readonly uid: number;
  readonly gid: number;
  /** util-linux `setpriv`, which switches to that user after the cgroups are joined. */
  readonly setprivPath: string;
}

/** Debian's `nobody` / `nogroup`: exists on every Debian and Ubuntu system. */
export const DEFAULT_SANDBOX_UID = 65534;
export const DEFAULT_SANDBOX_GID = 65534;

export type SandboxIdentityChoice =
  | { readonly usable: true; readonly identity: SandboxIdentity | undefined; readonly description: string }
  | { readonly usable: false; readonly reason: string };

/**
 * Who commands run as on the host. A service running as root must never hand its uid to a
 * command: bwrap's user namespace would map the sandbox user back to uid 0, and the kernel
 * checks writes to /proc/sys (core_pattern …) against that uid, not capabilities. So root
 * starts bwrap as `uid`/`gid` (default nobody/nogroup). A service that is not root cannot
 * switch users and runs bwrap as itself, which is unprivileged already; asking it for
 * another uid is refused rather than quietly ignored.
 */
export async function chooseSandboxIdentity(options: {
  readonly serviceUid: number;
  readonly uid: number | undefined;
  readonly gid: number | undefined;
  readonly setpriv: string;
}): Promise<SandboxIdentityChoice> {
  const { serviceUid } = options;
  if (options.uid === 0 || options.gid === 0) return { usable: false, reason: 'SANDBOX_UID and SANDBOX_GID may not be 0 (root)' };
  if (serviceUid !== 0) {
    if (options.uid !== undefined && options.uid !== serviceUid) {
      return {
        usable: false,
        reason: `SANDBOX_UID is ${String(options.uid)}, but the service runs as uid ${String(serviceUid)}, not root, and cannot switch users; unset SANDBOX_UID to run commands as the service's own unprivileged user`,
      };
    }
    return { usable: true, identity: undefined, description: `the service's own unprivileged uid ${String(serviceUid)}` };
  }
  const setprivPath = await findSetpriv(options.setpriv);
  if (setprivPath === undefined) {
    return { usable: false, reason: `the service runs as root and needs util-linux setpriv (looked for "${options.setpriv}") to start commands as an unprivileged user` };
  }
  const uid = options.uid ?? DEFAULT_SANDBOX_UID;
  const gid = options.gid ?? DEFAULT_SANDBOX_GID;
  return { usable: true, identity: { uid, gid, setprivPath }, description: `host uid ${String(uid)}, gid ${String(gid)}` };
}

async function findSetpriv(name: string): Promise<string | undefined> {
  const candidates = name.includes('/') ? [path.resolve(name)] : ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].map((folder) => path.join(folder, name));
  for (const candidate of candidates) {
    const ok = await access(candidate, constants.X_OK).then(
      async () => (await stat(candidate)).isFile(),
      () => false,
    );
    if (ok) return candidate;
  }
  return undefined;
}
