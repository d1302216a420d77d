import { lstat, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { SANDBOX_BIN, type SandboxAdditions } from './sandbox-additions.js';
import { SANDBOX_NODE } from './service-node.js';

/** Where the agent home appears inside the sandbox; also the command's HOME and start folder. */
export const SANDBOX_HOME = '/home/agent';

/**
 * The sandbox user as commands see it: not root inside, so tools behave as for a normal
 * login. Outside, on the host, it is whoever bwrap runs as (see `SandboxIdentity`), never root.
 */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/** Files handed to bwrap through pipes (`--ro-bind-data FD`): fds 4 and 5 of the bwrap process. */
export const PASSWD_FD = 4;
export const GROUP_FD = 5;
/** The arguments themselves go through fd 3 (`--args 3`), so the sandbox's /proc/1/cmdline shows no host paths. */
export const ARGUMENTS_FD = 3;
/** The seccomp program (`--seccomp 6`), when this architecture has one. */
export const SECCOMP_FD = 6;
/**
 * The agent home, as a folder descriptor the service opened (`--bind-fd 7`): bwrap, running
 * as the unprivileged sandbox user, never looks the home's host path up, so it needs no
 * access to the folders above it and nothing there can be swapped under it.
 */
export const HOME_FD = 7;
/** The scripts of added commands follow, from fd 8 on, in the order of `SandboxAdditions.commands`. */
export const FIRST_COMMAND_FD = 8;

export const SANDBOX_PASSWD = [
  'root:x:0:0:root:/root:/usr/sbin/nologin',
  `agent:x:${SANDBOX_UID}:${SANDBOX_GID}:agent:${SANDBOX_HOME}:/bin/sh`,
  'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
  '',
].join('\n');
export const SANDBOX_GROUP = ['root:x:0:', `agent:x:${SANDBOX_GID}:`, 'nogroup:x:65534:', ''].join('\n');

/** Top-level system folders: bound read-only when real folders, recreated when symlinks (merged /usr). */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What of /etc a shell and common tools need (name lookup, TLS roots, the dynamic linker,
 * time zones, Debian alternatives …). Not all of /etc: it holds secrets readable by uid 0
 * (/etc/shadow, /etc/ssl/private) and the sandbox user is uid 0 outside when the service
 * runs as root. npmrc, pip.conf and gitconfig are left out because they may hold tokens.
 */
const ETC_ENTRIES = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'debian_version',
  'gai.conf',
  'host.conf',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'locale.alias',
  'localtime',
  'lsb-release',
  'magic',
  'magic.mime',
  'mime.types',
  'networks',
  'nsswitch.conf',
  'os-release',
  'perl',
  'pki/tls/certs',
  'profile',
  'protocols',
  'python3',
  'resolv.conf',
  'services',
  'shells',
  'ssl/certs',
  'ssl/openssl.cnf',
  'terminfo',
  'timezone',
  'wgetrc',
];

export interface BwrapLayout {
  /** Host paths found at start-up: which system folders exist and how. */
  readonly systemFolders: readonly SystemFolder[];
  /** /etc entries that exist on this host, relative to /etc. */
  readonly etcEntries: readonly string[];
  /** Options newer than the oldest bwrap still shipped (0.6 in Ubuntu 22.04), used when present. */
  readonly features: BwrapFeatures;
  /** The service's Node.js binary on the host, bound at SANDBOX_NODE; undefined when the sandbox user cannot reach it (see `findServiceNode`). */
  readonly serviceNode?: string | undefined;
}

export interface BwrapFeatures {
  /** `--disable-userns` (0.8): no user namespaces inside the sandbox. */
  readonly disableUserns: boolean;
  /** `--size` (0.7): a size limit for a tmpfs. */
  readonly tmpfsSize: boolean;
}

/** What `bwrap --help` says this bwrap supports. */
export function parseBwrapFeatures(help: string): BwrapFeatures {
  return { disableUserns: help.includes('--disable-userns'), tmpfsSize: /--size\b/.test(help) };
}

type SystemFolder = { readonly path: string; readonly symlinkTarget: string } | { readonly path: string; readonly symlinkTarget?: undefined };

/** Looks once at the host to know what to bind; a missing entry is simply left out. */
export async function inspectBwrapLayout(features: BwrapFeatures): Promise<BwrapLayout> {
  const systemFolders: SystemFolder[] = [];
  for (const folder of SYSTEM_FOLDERS) {
    const stats = await lstat(folder).catch(() => undefined);
    if (stats === undefined) continue;
    if (stats.isSymbolicLink()) systemFolders.push({ path: folder, symlinkTarget: await readlink(folder) });
    else if (stats.isDirectory()) systemFolders.push({ path: folder });
  }
  const etcEntries: string[] = [];
  for (const entry of ETC_ENTRIES) {
    // stat, not lstat: a dangling symlink (resolv.conf often is one) would make bwrap fail.
    if (await stat(path.join('/etc', entry)).then(() => true, () => false)) etcEntries.push(entry);
  }
  return { systemFolders, etcEntries, features };
}

export interface BwrapArgumentsOptions {
  readonly layout: BwrapLayout;
  /** The real path of the agent home on the host (bound through HOME_FD when `homeFd` is set). */
  readonly home: string;
  /** Bind the home from the folder descriptor at HOME_FD instead of by its path. */
  readonly homeFd?: boolean;
  /** Start folder relative to the home ("" for the home). */
  readonly cwd: string;
  readonly allowNetwork: boolean;
  readonly tmpSizeBytes: number;
  /** The variables the command gets; nothing else of the service's environment crosses. */
  readonly env: Readonly<Record<string, string>>;
  /** Host paths bound read-only and command scripts put into SANDBOX_BIN (checked by `checkSandboxAdditions`). */
  readonly additions?: SandboxAdditions;
  /** Whether a seccomp program waits at SECCOMP_FD. */
  readonly seccomp?: boolean;
}

/**
 * The bwrap options (the command follows `--`). Isolation, in order of what it buys:
 *
 * - `--unshare-all` (+ `--unshare-user`, `--disable-userns`): own user, mount, PID, IPC,
 *   UTS, cgroup and network namespaces; no way to make more user namespaces inside (less
 *   kernel surface). The network namespace has only a down loopback unless `--share-net`.
 *   The PID namespace is what makes a kill complete: when bwrap dies, `--die-with-parent`
 *   kills its init, and the kernel then kills everything left in the namespace, including
 *   processes that called setsid() to leave the process group.
 * - An empty root made read-only at the end; /usr and the library folders bound read-only,
 *   a chosen part of /etc read-only, the home bound read-write at /home/agent, a
 *   size-limited tmpfs at /tmp and /dev/shm (tmpfs is memory), a fresh /proc and a minimal
 *   /dev (null, zero, random, tty …) that is read-only apart from those nodes; then the
 *   service's own Node.js binary (SANDBOX_NODE) and the service's additions (read-only
 *   binds, commands in /opt/turn-runtime/bin).
 * - `--new-session`: no controlling terminal, so no TIOCSTI keystroke injection.
 * - `--clearenv` and an explicit environment.
 * - `--seccomp`: the deny list of `buildSeccompFilter` (mount, ptrace, keyctl, bpf …).
 * - bwrap drops every capability of the command. The process itself is started as an
 *   unprivileged host uid (never 0: the kernel checks /proc/sys writes against the uid,
 *   not capabilities), so /proc/sys and /sys are not writable even though they are the
 *   host's.
 */
export function buildBwrapArguments(options: BwrapArgumentsOptions): string[] {
  const { features } = options.layout;
  const sized = (target: string): string[] => [...(features.tmpfsSize ? ['--size', String(options.tmpSizeBytes)] : []), '--tmpfs', target];
  const args: string[] = [
    '--unshare-all',
    '--unshare-user',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_GID),
    ...(features.disableUserns ? ['--disable-userns'] : []),
    ...(options.allowNetwork ? ['--share-net'] : []),
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    ...(options.seccomp === true ? ['--seccomp', String(SECCOMP_FD)] : []),
  ];
  for (const [name, value] of Object.entries(options.env)) args.push('--setenv', name, value);

  for (const folder of options.layout.systemFolders) {
    if (folder.symlinkTarget === undefined) args.push('--ro-bind', folder.path, folder.path);
    else args.push('--symlink', folder.symlinkTarget, folder.path);
  }
  args.push('--dir', '/etc');
  for (const entry of options.layout.etcEntries) {
    const host = path.join('/etc', entry);
    args.push('--ro-bind', host, host);
  }
  args.push(
    '--ro-bind-data',
    String(PASSWD_FD),
    '/etc/passwd',
    '--ro-bind-data',
    String(GROUP_FD),
    '/etc/group',
    ...(options.homeFd === true ? ['--bind-fd', String(HOME_FD)] : ['--bind', options.home]),
    SANDBOX_HOME,
    ...sized('/tmp'),
    '--dir',
    '/var',
    '--symlink',
    '../tmp',
    '/var/tmp',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...sized('/dev/shm'),
  );
  // After the tmpfs and before the root turns read-only, so bwrap can still make mount points.
  if (options.layout.serviceNode !== undefined) args.push('--ro-bind', options.layout.serviceNode, SANDBOX_NODE);
  for (const bind of options.additions?.readOnlyBinds ?? []) args.push('--ro-bind', bind.source, bind.target);
  (options.additions?.commands ?? []).forEach((command, index) => {
    args.push('--perms', '0555', '--ro-bind-data', String(FIRST_COMMAND_FD + index), path.posix.join(SANDBOX_BIN, command.name));
  });
  args.push(
    '--remount-ro',
    '/dev',
    // The whole of /proc read-only: /proc/sys holds sysctls of the sandbox's own namespaces
    // (IPC limits, ns_last_pid) that no command needs to change; nothing of it is writable.
    '--remount-ro',
    '/proc',
    '--remount-ro',
    '/',
    '--chdir',
    options.cwd === '' ? SANDBOX_HOME : path.posix.join(SANDBOX_HOME, options.cwd),
  );
  return args;
}
