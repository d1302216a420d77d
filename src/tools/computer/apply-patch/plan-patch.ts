import { describeFileError } from '../describe-file-error.js';
import { openHomePath, type OpenHomePath } from '../home-fs/open-home-path.js';
import { applyHunks } from './apply-hunks.js';
import { PatchApplyError } from './patch-apply-error.js';
import type { PatchOperation } from './patch-operation.js';
import { readOriginalFile, type OriginalFile } from './read-original-file.js';

/** All the files one patch reads, together. */
const PATCH_TOTAL_MAX_BYTES = 64 * 1024 * 1024;

/** What one operation of the patch did, as the model and the person see it. */
export interface PatchFileChange {
  readonly operation: 'add' | 'update' | 'move' | 'delete';
  /** The file's path relative to the agent home (its old path for a move). */
  readonly path: string;
  readonly movedTo?: string;
  readonly added: number;
  readonly removed: number;
}

export interface PlannedWrite {
  /** Where it goes, resolved through descriptors (open until the plan is closed). */
  readonly target: OpenHomePath;
  readonly display: string;
  readonly content: string;
  readonly mode: number | undefined;
  /** The bytes there now, put back if a later step fails; undefined for a new file. */
  readonly original: Buffer | undefined;
}

export interface PlannedDelete {
  readonly target: OpenHomePath;
  readonly display: string;
  readonly original: Buffer;
  readonly mode: number;
}

/** Every change a patch makes, computed in memory before anything is written. */
export interface PatchPlan {
  readonly writes: readonly PlannedWrite[];
  /** Done after every write, so a failed write never leaves a file deleted. */
  readonly deletes: readonly PlannedDelete[];
  readonly changes: readonly PatchFileChange[];
  /** Closes the descriptors of every path the plan resolved. */
  close(): Promise<void>;
}

/**
 * Resolves every path of a parsed patch inside the agent home, reads every file it touches
 * and computes every new content, writing nothing. Throws a `PatchApplyError` naming the
 * operation (and its patch line) for a path that escapes the home, an Add of a file that
 * exists, an Update or Delete of one that does not, a Move onto an existing file, a path
 * touched twice, or a hunk that does not match.
 */
export async function planPatch(options: {
  home: string;
  operations: readonly PatchOperation[];
  signal: AbortSignal;
}): Promise<PatchPlan> {
  const { home, operations, signal } = options;
  const opened: OpenHomePath[] = [];
  const close = async (): Promise<void> => {
    for (const target of opened) await target.close();
  };
  try {
    return await planResolved({ home, operations, signal, opened, close });
  } catch (error) {
    await close();
    throw error;
  }
}

async function planResolved(options: {
  home: string;
  operations: readonly PatchOperation[];
  signal: AbortSignal;
  opened: OpenHomePath[];
  close: () => Promise<void>;
}): Promise<PatchPlan> {
  const { home, operations, signal, opened } = options;
  const writes: PlannedWrite[] = [];
  const deletes: PlannedDelete[] = [];
  const changes: PatchFileChange[] = [];
  const touched = new Map<string, string>();
  let bytesRead = 0;

  /**
   * `source` is the Update's own file, which its `*** Move to:` may name again (no move).
   * `followLast`: an Update changes the file a link points to; an Add, Delete or Move sees the link itself.
   */
  const resolve = async (operation: PatchOperation, requested: string, followLast: boolean, source?: OpenHomePath): Promise<OpenHomePath> => {
    const where = `'${describeOperation(operation)}' (patch line ${operation.line})`;
    let target: OpenHomePath;
    try {
      target = await openHomePath({ home, requested, followLast });
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'ENOTDIR') {
        throw new PatchApplyError({ path: requested, message: `cannot create ${requested}: ${error.message}. Nothing was changed.` });
      }
      throw new PatchApplyError({ path: requested, message: `${where} refused: ${describeFileError(error, requested).message}. Nothing was changed.` });
    }
    opened.push(target);
    const earlier = touched.get(target.display);
    if (earlier !== undefined && target.display !== source?.display) {
      throw new PatchApplyError({
        path: target.display,
        message: `${where} touches ${target.display}, which ${earlier} already touches; put all changes to one file in one '*** Update File' section. Nothing was changed.`,
      });
    }
    touched.set(target.display, `'${describeOperation(operation)}' (patch line ${operation.line})`);
    return target;
  };
  const readOriginal = async (target: OpenHomePath, linkCheck: string | undefined): Promise<OriginalFile> => {
    const file = await readOriginalFile({ target, refuseLinkAt: linkCheck });
    bytesRead += file.bytes.length;
    if (bytesRead > PATCH_TOTAL_MAX_BYTES) {
      throw new PatchApplyError({
        path: target.display,
        message: `the patch touches more than ${PATCH_TOTAL_MAX_BYTES / 1024 / 1024} MiB of files at once; split it into smaller patches. Nothing was changed.`,
      });
    }
    return file;
  };

  for (const operation of operations) {
    signal.throwIfAborted();
    const target = await resolve(operation, operation.path, operation.kind === 'update' && operation.moveTo === undefined);
    const exists = target.stats !== undefined;
    if (operation.kind === 'add') {
      if (exists) {
        throw new PatchApplyError({
          path: target.display,
          message: `cannot add ${target.display} (patch line ${operation.line}): it already exists; use '*** Update File: ${operation.path}' to change it, or delete it first. Nothing was changed.`,
        });
      }
      writes.push({ target, display: target.display, content: joinNewFile(operation.lines), mode: undefined, original: undefined });
      changes.push({ operation: 'add', path: target.display, added: operation.lines.length, removed: 0 });
      continue;
    }
    if (!exists) {
      const hint = operation.kind === 'update' ? `; use '*** Add File: ${operation.path}' to create it` : '';
      throw new PatchApplyError({
        path: target.display,
        message: `cannot ${operation.kind} ${target.display} (patch line ${operation.line}): it does not exist${hint}. Nothing was changed.`,
      });
    }
    if (operation.kind === 'delete') {
      const { bytes, mode } = await readOriginal(target, operation.path);
      deletes.push({ target, display: target.display, original: bytes, mode });
      changes.push({ operation: 'delete', path: target.display, added: 0, removed: countLines(bytes) });
      continue;
    }

    const destination = operation.moveTo === undefined ? undefined : await resolve(operation, operation.moveTo, false, target);
    const moving = destination !== undefined && destination.display !== target.display;
    const { bytes, mode } = await readOriginal(target, moving ? operation.path : undefined);
    const text = decodeUtf8(bytes, target.display);
    const applied = applyHunks({ path: target.display, text, hunks: operation.hunks });
    if (destination !== undefined && moving) {
      if (destination.stats !== undefined) {
        throw new PatchApplyError({
          path: destination.display,
          message: `cannot move ${target.display} to ${destination.display} (patch line ${operation.line}): ${destination.display} already exists. Nothing was changed.`,
        });
      }
      writes.push({ target: destination, display: destination.display, content: applied.text, mode, original: undefined });
      deletes.push({ target, display: target.display, original: bytes, mode });
      changes.push({ operation: 'move', path: target.display, movedTo: destination.display, added: applied.added, removed: applied.removed });
    } else {
      if (applied.text !== text) writes.push({ target, display: target.display, content: applied.text, mode, original: bytes });
      changes.push({ operation: 'update', path: target.display, added: applied.added, removed: applied.removed });
    }
  }
  return { writes, deletes, changes, close: options.close };
}

function describeOperation(operation: PatchOperation): string {
  const verb = operation.kind === 'add' ? 'Add' : operation.kind === 'delete' ? 'Delete' : 'Update';
  const move = operation.kind === 'update' && operation.moveTo !== undefined ? ` → ${operation.moveTo}` : '';
  return `*** ${verb} File: ${operation.path}${move}`;
}

/** An added file's content: each `+` line ended by a newline, as Codex writes it. */
function joinNewFile(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join('');
}

function countLines(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  let count = 0;
  for (const byte of bytes) if (byte === 0x0a) count += 1;
  return bytes[bytes.length - 1] === 0x0a ? count : count + 1;
}

function decodeUtf8(bytes: Buffer, display: string): string {
  if (bytes.includes(0)) {
    throw new PatchApplyError({ path: display, message: `${display} is a binary file (it contains NUL bytes), so it cannot be patched. Nothing was changed.` });
  }
  try {
    // ignoreBOM keeps a byte-order mark in the text, so that it is written back unchanged.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new PatchApplyError({ path: display, message: `${display} is not UTF-8 text, so it cannot be patched. Nothing was changed.` });
  }
}
