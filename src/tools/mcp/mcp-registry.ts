import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import type { McpToolCall } from './create-mcp-tool.js';
import type { McpConfig, McpServerConfig } from './mcp-config.js';
import { McpSchemaInterner } from './mcp-schema-interner.js';
import { McpServerConnection, type McpConnectionSettings } from './mcp-server-connection.js';
import { McpUnavailableError } from './mcp-unavailable-error.js';

const DEFAULT_SETTINGS: Omit<McpConnectionSettings, 'callTimeoutMs'> = {
  connectTimeoutMs: 30_000,
  retryInitialMs: 1_000,
  retryMaxMs: 60_000,
};

/** How many sessions may be open, and for how long unused. */
export interface McpSessionLimits {
  /** A session no turn has used for this long is closed (a stdio server's process ends). */
  readonly idleCloseMs: number;
  /** Sessions one agent may hold at once, across servers. */
  readonly maxPerAgent: number;
  /** Sessions the whole service may hold at once. */
  readonly maxTotal: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = { idleCloseMs: 10 * 60_000, maxPerAgent: 8, maxTotal: 256 };

/** One agent's session with one server, and how it is being used. */
interface SessionSlot {
  readonly key: string;
  readonly agentId: string;
  readonly connection: McpServerConnection;
  /** Listings and calls under way: a slot in use is never closed for idleness or room. */
  active: number;
  lastUsedMs: number;
}

/**
 * The configured MCP servers and the sessions open with them. A session belongs to one agent:
 * it is opened for that agent's first turn that asks for the server and used only by that
 * agent's turns, so what one agent does on a stateful server (logging it turned on, files it
 * made, a login) is never seen or changed by another. A stdio server's process for an agent
 * runs in its own working folder, `DATA_DIR/agents/<agent>/mcp/<server>` (unless the config
 * names one).
 *
 * Sessions are bounded: one unused for `idleCloseMs` is closed; when an agent or the service
 * is at its limit, the least recently used session nobody is using closes to make room, and
 * when every one is in use the new one is refused (the turn goes on without that server's
 * tools, saying why). The tools a turn got keep working if their session is closed meanwhile:
 * each call goes to whichever session serves its agent then, opening one if needed.
 */
export class McpRegistry {
  readonly #servers: ReadonlyMap<string, McpServerConfig>;
  /** Per server, shared by every agent's session of it. */
  readonly #schemas = new Map<string, McpSchemaInterner>();
  readonly #settings: McpConnectionSettings;
  readonly #limits: McpSessionLimits;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #agentsFolder: string | undefined;
  /** By `server\0agent`, least recently used first. */
  readonly #slots = new Map<string, SessionSlot>();
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(options: {
    readonly config: McpConfig;
    readonly clock: Clock;
    readonly logger: Logger;
    /** Timeouts and retry waits; `callTimeoutMs` is usually the loop's tool timeout. */
    readonly settings: Pick<McpConnectionSettings, 'callTimeoutMs'> & Partial<McpConnectionSettings>;
    readonly limits?: Partial<McpSessionLimits>;
    /** `DATA_DIR/agents`: stdio servers run in a folder of the agent's there. Without it, in the service's own. */
    readonly agentsFolder?: string;
  }) {
    this.#servers = options.config.servers;
    for (const name of this.#servers.keys()) this.#schemas.set(name, new McpSchemaInterner());
    this.#settings = { ...DEFAULT_SETTINGS, ...options.settings };
    this.#limits = { ...DEFAULT_MCP_SESSION_LIMITS, ...options.limits };
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#agentsFolder = options.agentsFolder;
    const period = Math.max(1_000, Math.min(60_000, Math.floor(this.#limits.idleCloseMs / 4)));
    this.#sweeper = setInterval(() => {
      this.closeIdle();
    }, period);
    this.#sweeper.unref();
  }

  /** True when a server of this name is configured. */
  has(name: string): boolean {
    return this.#servers.has(name);
  }

  get serverNames(): readonly string[] {
    return [...this.#servers.keys()];
  }

  /** The sessions held now (open, opening or waiting to retry), least recently used first. */
  get sessions(): readonly { readonly server: string; readonly agentId: string; readonly open: boolean; readonly active: number }[] {
    return [...this.#slots.values()].map((slot) => ({ server: slot.connection.name, agentId: slot.agentId, open: slot.connection.holdsSession, active: slot.active }));
  }

  /** Open sessions (processes running, HTTP sessions held) by server, for the metrics. */
  openSessionsByServer(): ReadonlyMap<string, number> {
    const counts = new Map<string, number>();
    for (const slot of this.#slots.values()) {
      if (slot.connection.holdsSession) counts.set(slot.connection.name, (counts.get(slot.connection.name) ?? 0) + 1);
    }
    return counts;
  }

  /**
   * A configured server's tools for one agent (deferred, namespaced by the server's name),
   * from that agent's session. Rejects with `McpUnavailableError` when the server cannot
   * serve them before `signal` aborts, or no session can be opened within the limits.
   */
  async toolsFor(name: string, agentId: string, signal: AbortSignal): Promise<readonly WorkerAgentTool[]> {
    const slot = this.#slot(name, agentId);
    try {
      return await slot.connection.tools(signal);
    } finally {
      this.#release(slot);
    }
  }

  /**
   * Closes every session nobody has used for `idleCloseMs`, and forgets it. Runs on a timer;
   * callable at any time.
   */
  closeIdle(): void {
    const now = this.#clock.monotonicMs();
    for (const slot of [...this.#slots.values()]) {
      if (slot.active === 0 && now - slot.lastUsedMs >= this.#limits.idleCloseMs) this.#drop(slot, 'idle');
    }
  }

  /** Closes every session (stopping stdio servers); for the app's close hook. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    const slots = [...this.#slots.values()];
    this.#slots.clear();
    await Promise.all(slots.map((slot) => slot.connection.close()));
  }

  /** The agent's slot for the server, taken for one use (release it after). */
  #slot(name: string, agentId: string): SessionSlot {
    const config = this.#servers.get(name);
    if (config === undefined) throw new Error(`no MCP server named "${name}" is configured`);
    if (this.#closed) throw new McpUnavailableError(name, 'the runtime is shutting down');
    const key = `${name}\0${agentId}`;
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      this.#makeRoom(name, agentId);
      slot = { key, agentId, connection: this.#newConnection(name, agentId, config), active: 0, lastUsedMs: 0 };
    } else {
      this.#slots.delete(key);
    }
    // Most recently used last: the map's order is the eviction order.
    this.#slots.set(key, slot);
    slot.active += 1;
    slot.lastUsedMs = this.#clock.monotonicMs();
    return slot;
  }

  #release(slot: SessionSlot): void {
    slot.active -= 1;
    slot.lastUsedMs = this.#clock.monotonicMs();
  }

  /** Closes the least recently used unused sessions until a new one fits both limits. */
  #makeRoom(name: string, agentId: string): void {
    const agentSlots = () => [...this.#slots.values()].filter((slot) => slot.agentId === agentId);
    if (agentSlots().length >= this.#limits.maxPerAgent) {
      const victim = agentSlots().find((slot) => slot.active === 0);
      if (victim === undefined) {
        throw new McpUnavailableError(name, `the agent's ${this.#limits.maxPerAgent} MCP session(s) (MCP_MAX_SESSIONS_PER_AGENT) are all in use`);
      }
      this.#drop(victim, 'the agent is at its session limit');
    }
    if (this.#slots.size >= this.#limits.maxTotal) {
      const victim = [...this.#slots.values()].find((slot) => slot.active === 0);
      if (victim === undefined) throw new McpUnavailableError(name, `the service's ${this.#limits.maxTotal} MCP session(s) (MCP_MAX_SESSIONS) are all in use`);
      this.#drop(victim, 'the service is at its session limit');
    }
  }

  #drop(slot: SessionSlot, why: string): void {
    this.#slots.delete(slot.key);
    if (slot.connection.holdsSession) this.#logger.info({ mcpServer: slot.connection.name, agentId: slot.agentId }, `closing an MCP session: ${why}`);
    void slot.connection.close();
  }

  #newConnection(name: string, agentId: string, config: McpServerConfig): McpServerConnection {
    return new McpServerConnection({
      name,
      config,
      settings: this.#settings,
      clock: this.#clock,
      logger: this.#logger.child({ agentId }),
      // Stable for the agent: a tool keeps reaching the agent's session, whichever is open when it is called.
      callTool: (call) => this.#call(name, agentId, call),
      schemas: this.#schemas.get(name) ?? new McpSchemaInterner(),
      ...(this.#agentsFolder === undefined ? {} : { workingFolder: path.join(this.#agentsFolder, agentId, 'mcp', name) }),
    });
  }

  async #call(name: string, agentId: string, call: McpToolCall): ReturnType<McpServerConnection['call']> {
    let slot: SessionSlot;
    try {
      slot = this.#slot(name, agentId);
    } catch (error) {
      if (error instanceof McpUnavailableError) throw new Error(`the MCP server "${name}" is unavailable: ${error.message}`, { cause: error });
      throw error;
    }
    try {
      return await slot.connection.call(call);
    } finally {
      this.#release(slot);
    }
  }
}
