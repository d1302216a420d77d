import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import type { McpConfig } from './mcp-config.js';
import { McpServerConnection, type McpConnectionSettings } from './mcp-server-connection.js';

const DEFAULT_SETTINGS: Omit<McpConnectionSettings, 'callTimeoutMs'> = {
  connectTimeoutMs: 30_000,
  retryInitialMs: 1_000,
  retryMaxMs: 60_000,
};

/**
 * The configured MCP servers, created once at start-up and shared by every turn. Nothing
 * connects until a turn asks for a server; each server then keeps one session, its tool
 * listing and the tools built from it (see `McpServerConnection`).
 */
export class McpRegistry {
  readonly #connections = new Map<string, McpServerConnection>();

  constructor(options: {
    readonly config: McpConfig;
    readonly clock: Clock;
    readonly logger: Logger;
    /** Timeouts and retry waits; `callTimeoutMs` is usually the loop's tool timeout. */
    readonly settings: Pick<McpConnectionSettings, 'callTimeoutMs'> & Partial<McpConnectionSettings>;
  }) {
    const settings = { ...DEFAULT_SETTINGS, ...options.settings };
    for (const [name, config] of options.config.servers) {
      this.#connections.set(name, new McpServerConnection({ name, config, settings, clock: options.clock, logger: options.logger }));
    }
  }

  /** True when a server of this name is configured. */
  has(name: string): boolean {
    return this.#connections.has(name);
  }

  get serverNames(): readonly string[] {
    return [...this.#connections.keys()];
  }

  /**
   * A configured server's tools (deferred, namespaced by the server's name). Rejects with
   * `McpUnavailableError` when the server cannot serve them before `signal` aborts.
   */
  toolsFor(name: string, signal: AbortSignal): Promise<readonly WorkerAgentTool[]> {
    const connection = this.#connections.get(name);
    if (connection === undefined) return Promise.reject(new Error(`no MCP server named "${name}" is configured`));
    return connection.tools(signal);
  }

  /** Closes every session (stopping stdio servers); for the app's close hook. */
  async close(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((connection) => connection.close()));
  }
}
