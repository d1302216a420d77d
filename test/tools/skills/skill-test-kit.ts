import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { defaultSandboxLimits, type CommandSandbox } from '../../../src/sandbox/command-sandbox.js';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import type { McpServerConfig } from '../../../src/tools/mcp/mcp-config.js';
import type { Skill } from '../../../src/tools/skills/skill-catalog.js';
import { resultText, type AgentToolResult } from '../../../src/tools/tool-result.js';

/** A fresh temp folder, removed by `remove`. */
export async function tempFolder(prefix: string): Promise<{ folder: string; remove: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(tmpdir(), prefix));
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

/** The text of a SKILL.md: front matter lines (YAML) between `---`, then the body. */
export function skillMarkdown(frontMatter: string, body = '# Instructions\n\nDo the thing.\n'): string {
  return `---\n${frontMatter}\n---\n${body}`;
}

/**
 * Writes `<root>/<folder>/SKILL.md` and any extra files (paths relative to the skill folder;
 * a file whose name ends in `.sh` is made executable).
 */
export async function writeSkill(root: string, folder: string, skillText: string | undefined, files: Record<string, string> = {}): Promise<string> {
  const skillFolder = path.join(root, folder);
  await mkdir(skillFolder, { recursive: true });
  if (skillText !== undefined) await writeFile(path.join(skillFolder, 'SKILL.md'), skillText);
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(skillFolder, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    if (relative.endsWith('.sh')) await chmod(file, 0o755);
  }
  return skillFolder;
}

/** A catalog skill built in memory, for tool tests that need no folder. */
export function skillFixture(overrides: Partial<Skill> & { name: string }): Skill {
  return {
    description: `Does ${overrides.name} work.`,
    body: `# ${overrides.name}\n\nFollow these steps.\n`,
    folder: '/nonexistent',
    files: [],
    mcpServers: [],
    ...overrides,
  };
}

/** A sandbox for tool tests that never runs anything. */
export function idleSandbox(overrides: Partial<CommandSandbox> = {}): CommandSandbox {
  return {
    kind: 'bubblewrap',
    isolated: true,
    allowNetwork: false,
    homeInside: '/home/agent',
    outputLimitBytes: 4096,
    limits: defaultSandboxLimits,
    run: () => Promise.reject(new Error('this test runs no command')),
    ...overrides,
  };
}

export const stdioServer = (command = '/usr/bin/node', extra: Partial<McpServerConfig> = {}): McpServerConfig =>
  ({ transport: 'stdio', command, args: ['server.js'], env: {}, ...extra }) as McpServerConfig;

/** Validates arguments as the loop does, runs the tool, and returns what the model and the person see. */
export async function callTool<T>(tool: WorkerAgentTool<T>, args: unknown, signal = new AbortController().signal) {
  const checked = tool.checkArguments(args);
  if (!checked.ok) throw new Error(`invalid arguments: ${checked.issues.map((issue) => issue.message).join('; ')}`);
  const result: AgentToolResult = await tool.execute(checked.params, { signal, callId: 'call_1', logger: pino({ level: 'silent' }), present: () => undefined, reportStopped: () => undefined });
  return {
    text: resultText(result.content),
    details: result.details,
    activity: tool.describeActivity(checked.params),
    completed: tool.describeCompletedActivity?.(checked.params, result),
  };
}
