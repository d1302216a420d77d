import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CommandSandboxError, type CommandRunRequest } from './command-sandbox.js';

export interface CheckedCommandRequest {
  /** The real path of the home. */
  readonly home: string;
  /** The start folder relative to the home, normalised; "" for the home itself. */
  readonly cwd: string;
}

/**
 * The last line of defence before a process starts: the tool has already checked its
 * parameters, so anything refused here is a bug in the caller and says so.
 */
export async function checkCommandRequest(request: CommandRunRequest): Promise<CheckedCommandRequest> {
  if (request.command.trim() === '') throw new CommandSandboxError('the command is empty');
  if (request.command.includes('\0')) throw new CommandSandboxError('the command contains a NUL byte');
  if (!Number.isFinite(request.timeoutMs) || request.timeoutMs <= 0) {
    throw new CommandSandboxError(`the timeout must be a positive number of milliseconds, not ${String(request.timeoutMs)}`);
  }
  let home: string;
  try {
    home = await realpath(request.home);
  } catch (error) {
    throw new CommandSandboxError(`the agent home ${request.home} cannot be used: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (home === path.parse(home).root) throw new CommandSandboxError('the agent home may not be the file system root');
  if (!(await stat(home)).isDirectory()) throw new CommandSandboxError(`the agent home ${request.home} is not a folder`);

  const requested = request.cwd ?? '';
  const cwd = path.posix.normalize(requested === '' ? '.' : requested);
  if (requested.includes('\0') || path.posix.isAbsolute(cwd) || cwd === '..' || cwd.startsWith('../')) {
    throw new CommandSandboxError(`the working folder "${requested}" is not a relative path inside the home`);
  }
  return { home, cwd: cwd === '.' ? '' : cwd.replace(/\/$/, '') };
}
