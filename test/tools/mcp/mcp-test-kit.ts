import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { vi } from 'vitest';
import { validateToolArguments } from '../../../src/arguments/validate-tool-arguments.js';
import type { Clock } from '../../../src/clock.js';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import type { McpServerConfig } from '../../../src/tools/mcp/mcp-config.js';
import { McpRegistry, type McpSessionLimits } from '../../../src/tools/mcp/mcp-registry.js';
import type { AgentToolResult } from '../../../src/tools/tool-result.js';

export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A pino logger that keeps what it logs. */
export function recordingLogger(): { logger: Logger; records: LogRecord[]; warnings: () => LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => records.push(JSON.parse(line) as LogRecord) });
  return { logger, records, warnings: () => records.filter((record) => record.level === 40) };
}

/** A clock that moves only when told to, so backoff tests never wait. */
export function manualClock(): Clock & { advance(milliseconds: number): void } {
  let monotonic = 1_000;
  return {
    now: () => new Date(Date.UTC(2026, 0, 1) + monotonic),
    monotonicMs: () => monotonic,
    advance(milliseconds) {
      monotonic += milliseconds;
    },
  };
}

export interface RegistryHarness {
  readonly registry: McpRegistry;
  readonly clock: ReturnType<typeof manualClock>;
  readonly log: ReturnType<typeof recordingLogger>;
}

/** A registry over the given servers, with a manual clock and a recording logger. */
export function createTestRegistry(
  servers: Record<string, McpServerConfig>,
  settings: { connectTimeoutMs?: number; limits?: Partial<McpSessionLimits>; agentsFolder?: string } = {},
): RegistryHarness {
  const clock = manualClock();
  const log = recordingLogger();
  const registry = new McpRegistry({
    config: { servers: new Map(Object.entries(servers)) },
    clock,
    logger: log.logger,
    settings: { callTimeoutMs: 30_000, connectTimeoutMs: settings.connectTimeoutMs ?? 15_000 },
    ...(settings.limits === undefined ? {} : { limits: settings.limits }),
    ...(settings.agentsFolder === undefined ? {} : { agentsFolder: settings.agentsFolder }),
  });
  return { registry, clock, log };
}

/** A signal that never fires. */
export const noAbort = new AbortController().signal;

/** The tool named `name` (the provider name) among `tools`. */
export function toolNamed(tools: readonly WorkerAgentTool[], name: string): WorkerAgentTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name} among ${tools.map((candidate) => candidate.name).join(', ')}`);
  return tool;
}

/**
 * Runs a tool the way the loop does: the raw argument string is validated first (so a
 * call that breaks the schema never reaches `execute`), then `execute` gets the signal.
 */
export async function callTool(options: {
  tool: WorkerAgentTool;
  rawArguments: string;
  signal?: AbortSignal;
}): Promise<{ ok: true; result: AgentToolResult } | { ok: false; rejected: string }> {
  const validated = validateToolArguments({ tool: options.tool, rawArguments: options.rawArguments });
  if (!validated.ok) return { ok: false, rejected: validated.message };
  const result = await options.tool.execute(validated.params, {
    signal: options.signal ?? new AbortController().signal,
    callId: 'call_1',
    logger: pino({ level: 'silent' }),
    present: () => undefined, reportStopped: () => undefined,
  });
  return { ok: true, result };
}

/** Which process serves a session, and where it runs (the stdio test server's `where` tool). */
export async function where(tools: readonly WorkerAgentTool[]): Promise<{ pid: number; cwd: string }> {
  const outcome = await callTool({ tool: toolNamed(tools, 'where'), rawArguments: '{}' });
  if (!outcome.ok) throw new Error(outcome.rejected);
  return JSON.parse(outcome.result.content as string) as { pid: number; cwd: string };
}

/** A temp folder and an events file the stdio test server appends to. */
export async function eventsFolder(): Promise<{ folder: string; eventsFile: string; events: () => Promise<string[]>; remove: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'mcp-test-'));
  const eventsFile = path.join(folder, 'events.log');
  return {
    folder,
    eventsFile,
    events: async () => {
      try {
        return (await readFile(eventsFile, 'utf8')).split('\n').filter((line) => line !== '');
      } catch {
        return [];
      }
    },
    remove: () => rm(folder, { recursive: true, force: true }),
  };
}

/** Waits until `check` passes (bounded by the test's own timeout, not by a guess at speed). */
export async function eventually(check: () => Promise<void> | void): Promise<void> {
  await vi.waitFor(check, { timeout: 15_000, interval: 20 });
}
