import { z } from 'zod';

/** An MCP server's name is its tools' namespace, so it must be one providers accept. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const stringMap = z.record(z.string(), z.string());

const stdioServerSchema = z.strictObject({
  transport: z.literal('stdio'),
  /** The program to start; looked up on PATH unless it is a path. */
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to the small default environment (PATH, HOME …); the service's own secrets are not passed on. */
  env: stringMap.default({}),
  /** The working folder; relative to the config file's folder. */
  cwd: z.string().min(1).optional(),
});

const httpServerSchema = z.strictObject({
  transport: z.literal('http'),
  /** The Streamable HTTP endpoint. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  /** Sent with every request (e.g. `Authorization`). */
  headers: stringMap.default({}),
});

export const mcpServerConfigSchema = z.discriminatedUnion('transport', [stdioServerSchema, httpServerSchema]);

/** The MCP config file: `{ "servers": { "<name>": { "transport": "stdio" | "http", … } } }`. */
export const mcpConfigFileSchema = z.strictObject({
  servers: z.record(z.string().regex(MCP_SERVER_NAME_PATTERN, 'a server name must match ^[A-Za-z0-9_-]{1,64}$ (it becomes a tool namespace)'), mcpServerConfigSchema),
});

export type McpServerConfig = z.infer<typeof mcpServerConfigSchema>;
export type McpStdioServerConfig = z.infer<typeof stdioServerSchema>;
export type McpHttpServerConfig = z.infer<typeof httpServerSchema>;

/** The configured MCP servers, by name. */
export interface McpConfig {
  readonly servers: ReadonlyMap<string, McpServerConfig>;
}

export const EMPTY_MCP_CONFIG: McpConfig = { servers: new Map() };
