import { z } from 'zod';
import type { JsonObject } from '../../../json.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../define-worker-tool.js';
import type { AgentToolResult } from '../../tool-result.js';
import { withAgentHomeLock } from '../agent-home-lock.js';
import type { FileToolOptions } from '../file-tool-options.js';
import { applyPatch, type PatchSummary } from './apply-patch.js';
import { formatLineCounts, formatPatchSummary } from './format-patch-summary.js';
import { parsePatch } from './parse-patch.js';

const PATCH_DESCRIPTION = [
  'The whole patch text. Format:',
  '*** Begin Patch',
  '*** Add File: <path>      (a new file; every line of its content follows, each starting with "+")',
  '*** Update File: <path>   (change an existing file)',
  '*** Move to: <new path>   (optional, right after Update File: rename the file too)',
  '@@ <a line of the file such as a function signature, to say where the hunk is; or just "@@">',
  ' <unchanged context line, starting with a space>',
  '-<removed line>',
  '+<added line>',
  '*** End of File           (optional, after a hunk whose last lines are the end of the file)',
  '*** Delete File: <path>   (delete a file; nothing follows)',
  '*** End Patch',
  'Paths are relative to the agent home. Give about 3 unchanged lines before and after each change, copied exactly from the file;',
  'list hunks in file order; use one Update File section per file. Example:',
  '*** Begin Patch',
  '*** Update File: src/app.ts',
  '@@ function greet(name: string) {',
  "   const greeting = 'Hello';",
  "-  console.log('Hi');",
  '+  console.log(`${greeting}, ${name}!`);',
  ' }',
  '*** Add File: docs/notes.md',
  '+# Notes',
  '+',
  '+Greeting changed.',
  '*** Delete File: old.txt',
  '*** End Patch',
].join('\n');

const applyPatchSchema = z.object({
  patch: z.string().describe(PATCH_DESCRIPTION),
});

export type ApplyPatchParams = z.output<typeof applyPatchSchema>;

/**
 * The apply_patch tool: creates, changes, renames and deletes text files in the agent home
 * with one patch in the format OpenAI models are trained on (Codex CLI), all or nothing.
 */
export function createApplyPatchTool(options: FileToolOptions): WorkerAgentTool<ApplyPatchParams> {
  const { home } = options;
  return defineWorkerTool<ApplyPatchParams>({
    name: 'apply_patch',
    description: [
      'Create, change, rename and delete text files in the agent home folder with one patch (format in the patch parameter).',
      'All or nothing: every hunk is checked against the files first; if any does not match, nothing is written and the error',
      'names the file and the hunk. Context and removed lines are matched exactly first, then ignoring differences in surrounding',
      'whitespace. Read the files first so the context lines are exact. Good for several edits in one file or across files.',
    ].join(' '),
    schema: applyPatchSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: true,
    describeActivity: (params) => {
      const files = patchedFiles(params.patch);
      if (files === undefined) return 'Applying a patch';
      return files.length === 1 ? `Applying a patch to ${files[0] ?? ''}` : `Applying a patch to ${files.length} files`;
    },
    describeCompletedActivity: (_params, result) => describeCompleted(result.details),
    execute: (params, context) =>
      withAgentHomeLock({ home, mode: 'shared', signal: context.signal }, async (): Promise<AgentToolResult> => {
        const summary = await applyPatch({ home, patch: params.patch, signal: context.signal, owner: options.owner, homeMaxBytes: options.homeMaxBytes });
        return { content: formatPatchSummary(summary), details: summaryDetails(summary) };
      }),
  });
}

/** The files a patch names (a renamed file by its new name), or undefined when it does not parse. */
function patchedFiles(patch: string): string[] | undefined {
  try {
    return parsePatch(patch).operations.map((operation) =>
      operation.kind === 'update' && operation.moveTo !== undefined ? operation.moveTo : operation.path,
    );
  } catch {
    return undefined;
  }
}

function summaryDetails(summary: PatchSummary): JsonObject {
  return {
    files: summary.changes.map((change) => ({
      operation: change.operation,
      path: change.path,
      ...(change.movedTo === undefined ? {} : { movedTo: change.movedTo }),
      added: change.added,
      removed: change.removed,
    })),
    linesAdded: summary.linesAdded,
    linesRemoved: summary.linesRemoved,
  };
}

function describeCompleted(details: JsonObject | undefined): string {
  const files = details?.['files'];
  const added = details?.['linesAdded'];
  const removed = details?.['linesRemoved'];
  if (!Array.isArray(files) || typeof added !== 'number' || typeof removed !== 'number') return 'Applied a patch';
  const counts = formatLineCounts({ added, removed });
  const only = files.length === 1 ? files[0] : undefined;
  const name =
    typeof only === 'object' && only !== null && !Array.isArray(only)
      ? typeof only['movedTo'] === 'string'
        ? only['movedTo']
        : only['path']
      : undefined;
  const subject = typeof name === 'string' ? name : `${files.length} files`;
  return counts === '' ? `Patched ${subject}` : `Patched ${subject} ${counts}`;
}
