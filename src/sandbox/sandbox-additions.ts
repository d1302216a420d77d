import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { SANDBOX_NODE_FOLDER } from './service-node.js';

/** Where `SandboxAdditions.commands` appear inside the sandbox; appended to the command's PATH. */
export const SANDBOX_BIN = '/opt/turn-runtime/bin';

/**
 * What the service adds to every bubblewrap sandbox beyond the system folders: host paths
 * bound read-only (the package of a CLI that skills use, an MCP server's install …) and
 * small commands in `SANDBOX_BIN`. Nothing here is writable from inside.
 */
export interface SandboxAdditions {
  /** A host file or folder, and the absolute path where it appears inside, read-only. */
  readonly readOnlyBinds: readonly { readonly source: string; readonly target: string }[];
  /**
   * A command on PATH: its name and the script it runs (a `#!` line first). The script is
   * handed to bwrap through a pipe (`--ro-bind-data`), so no file of the host is needed.
   */
  readonly commands: readonly { readonly name: string; readonly script: string }[];
}

/** The largest script a command may have. */
const MAX_SCRIPT_BYTES = 64 * 1024;

export const NO_SANDBOX_ADDITIONS: SandboxAdditions = { readOnlyBinds: [], commands: [] };

/**
 * Places an addition must not cover: the root, the home, and what the sandbox builds itself
 * (a bind over /home or /etc would hide the home or replace /etc/passwd).
 */
const RESERVED = [SANDBOX_NODE_FOLDER, '/home/agent', '/tmp', '/var/tmp', '/proc', '/dev', '/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', SANDBOX_BIN];
/** Places an addition must not go below. */
const CLOSED = [SANDBOX_NODE_FOLDER, '/home/agent', '/proc', '/dev', '/sys', '/etc', SANDBOX_BIN];

/**
 * Keeps the additions that are safe and possible, warning once for each one left out: a
 * target that is relative or would cover a reserved place, a source that does not exist (bwrap
 * would refuse every command), a command name that is not a plain file name or repeats one.
 */
export async function checkSandboxAdditions(options: { readonly additions: SandboxAdditions; readonly logger: Logger }): Promise<SandboxAdditions> {
  const { additions, logger } = options;
  const readOnlyBinds: { source: string; target: string }[] = [];
  for (const bind of additions.readOnlyBinds) {
    const problem = (await sourceProblem(bind.source)) ?? targetProblem(bind.target);
    if (problem === undefined) readOnlyBinds.push({ source: bind.source, target: bind.target });
    else logger.warn({ source: bind.source, target: bind.target }, `run_command: not binding ${bind.source} at ${bind.target} in the sandbox: ${problem}`);
  }
  const commands: { name: string; script: string }[] = [];
  for (const command of additions.commands) {
    const problem = !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(command.name)
      ? 'not a plain command name'
      : !command.script.startsWith('#!') || Buffer.byteLength(command.script) > MAX_SCRIPT_BYTES
        ? `its script must start with "#!" and be at most ${MAX_SCRIPT_BYTES / 1024} KiB`
        : commands.some((kept) => kept.name === command.name)
          ? 'a command of that name is already added'
          : undefined;
    if (problem === undefined) commands.push({ name: command.name, script: command.script });
    else logger.warn({ command: command.name }, `run_command: not adding the command "${command.name}" to the sandbox: ${problem}`);
  }
  return { readOnlyBinds, commands };
}

async function sourceProblem(source: string): Promise<string | undefined> {
  if (!path.isAbsolute(source)) return 'the host path must be absolute';
  return stat(source).then(
    () => undefined,
    (error: unknown) => `the host path cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
  );
}

function targetProblem(target: string): string | undefined {
  if (target === '/') return 'it would cover the whole sandbox';
  if (!path.posix.isAbsolute(target) || path.posix.normalize(target) !== target || target.endsWith('/')) {
    return 'the place inside must be a normalised absolute path';
  }
  const covered = RESERVED.find((reserved) => reserved === target || reserved.startsWith(`${target}/`));
  if (covered !== undefined) return `it would cover ${covered}, which the sandbox sets up itself`;
  const inside = CLOSED.find((closed) => target.startsWith(`${closed}/`));
  if (inside !== undefined) return `nothing may be bound below ${inside}`;
  return undefined;
}
