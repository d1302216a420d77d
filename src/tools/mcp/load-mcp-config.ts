import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { ConfigError } from '../../config/config-error.js';
import { hasOwn, isJsonObject } from '../../json.js';
import { formatIssuePath } from '../schema/format-issue-path.js';
import { mcpConfigFileSchema, type McpConfig, type McpServerConfig } from './mcp-config.js';

/** A bad MCP config file; the process refuses to start with this message. */
export class McpConfigError extends ConfigError {
  constructor(file: string, problems: readonly string[]) {
    super(problems.map((problem) => `MCP_CONFIG_FILE ${file}: ${problem}`));
    this.name = 'McpConfigError';
  }
}

/**
 * Reads and validates the MCP config file once, at start-up. Every problem is reported with
 * the file and the path inside it (`servers.github.url: must be an http:// or https:// URL`).
 * A relative `cwd` is taken from the file's folder, so the file means the same wherever the
 * service starts.
 */
export async function loadMcpConfig(file: string): Promise<McpConfig> {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new McpConfigError(absolute, [code === 'ENOENT' ? 'the file does not exist' : `the file cannot be read (${code ?? String(error)})`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(absolute, [`not valid JSON: ${error instanceof Error ? error.message : String(error)}`]);
  }
  // JSON.parse keeps "__proto__" as an own key, but a record schema would assign it to the
  // prototype and the server would vanish without a word.
  if (isJsonObject(raw) && isJsonObject(raw['servers']) && hasOwn(raw['servers'], '__proto__')) {
    throw new McpConfigError(absolute, ['servers.__proto__: not a usable server name']);
  }
  const parsed = mcpConfigFileSchema.safeParse(raw);
  if (!parsed.success) throw new McpConfigError(absolute, parsed.error.issues.map(describeIssue));
  const folder = path.dirname(absolute);
  const servers = new Map<string, McpServerConfig>();
  for (const [name, server] of Object.entries(parsed.data.servers)) {
    servers.set(name, server.transport === 'stdio' && server.cwd !== undefined ? { ...server, cwd: path.resolve(folder, server.cwd) } : server);
  }
  return { servers };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  // A bad record key carries its own issues; theirs say what is wrong with the name.
  const message = issue.code === 'invalid_key' ? issue.issues.map((inner) => inner.message).join('; ') : issue.message;
  return `${formatIssuePath(issue.path)}: ${message.replace(/^Invalid input: /, '')}`;
}
