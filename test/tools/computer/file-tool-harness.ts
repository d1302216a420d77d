import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import { resultText, type AgentToolResult } from '../../../src/tools/tool-result.js';

/** A temporary folder holding an agent `home` and, beside it, an `outside` the agent must not reach. */
export interface Sandbox {
  readonly root: string;
  readonly home: string;
  readonly outside: string;
  remove(): Promise<void>;
}

export async function createSandbox(): Promise<Sandbox> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'file-tools-')));
  const home = path.join(root, 'home');
  const outside = path.join(root, 'outside');
  await mkdir(home);
  await mkdir(outside);
  return { root, home, outside, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Validates `args` as the loop would, then executes the tool; invalid arguments throw. */
export async function runTool<TParams>(
  tool: WorkerAgentTool<TParams>,
  args: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<AgentToolResult> {
  const checked = tool.checkArguments(args);
  if (!checked.ok) {
    throw new Error(`invalid arguments: ${checked.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  return tool.execute(checked.params, {
    signal,
    callId: 'c1',
    logger: pino({ level: 'silent' }),
    present: () => {},
    reportStopped: () => {},
  });
}

/** Runs the tool and returns its text and both labels. */
export async function runForText<TParams>(
  tool: WorkerAgentTool<TParams>,
  args: unknown,
): Promise<{ text: string; result: AgentToolResult; activity: string; completed: string | undefined }> {
  const checked = tool.checkArguments(args);
  if (!checked.ok) throw new Error('invalid arguments');
  const result = await runTool(tool, args);
  return {
    text: resultText(result.content),
    result,
    activity: tool.describeActivity(checked.params),
    completed: tool.describeCompletedActivity?.(checked.params, result),
  };
}
