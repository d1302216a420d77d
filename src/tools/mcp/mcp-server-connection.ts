import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { callMcpTask } from './call-mcp-task.js';
import type { McpToolCall, McpToolCaller } from './create-mcp-tool.js';
import { createMcpTransport, type McpTransport } from './create-mcp-transport.js';
import { describeMcpFailure } from './describe-mcp-failure.js';
import { listMcpTools } from './list-mcp-tools.js';
import type { McpServerConfig } from './mcp-config.js';
import type { McpSchemaInterner } from './mcp-schema-interner.js';
import { McpUnavailableError } from './mcp-unavailable-error.js';
import { projectMcpTools, type ProjectedMcpTool } from './project-mcp-tools.js';
import { isStaleHttpSession } from './stale-http-session.js';
import { waitUnlessAborted } from './wait-unless-aborted.js';

export interface McpConnectionSettings {
  /** Start-up (spawn or connect, `initialize`) and each `tools/list`. */
  readonly connectTimeoutMs: number;
  /** A `tools/call`; the loop's own tool timeout usually cancels first. */
  readonly callTimeoutMs: number;
  /** The wait after the first failure; it doubles per failure in a row, up to `retryMaxMs`. */
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
}

/** One open session with the server and its current tool listing. */
interface Session {
  readonly client: Client;
  readonly transport: McpTransport;
  /** When it was opened (the clock's monotonic ms). */
  connectedAtMs: number;
  /** Settles with the newest listing; replaced when the server announces a change. */
  listing: Promise<readonly WorkerAgentTool[]> | undefined;
  refreshQueued: boolean;
  ended: boolean;
}

type State =
  | { readonly kind: 'idle' }
  | { readonly kind: 'connecting'; readonly ready: Promise<Session>; readonly client: Client }
  | { readonly kind: 'live'; readonly session: Session }
  | { readonly kind: 'failed'; readonly reason: string; readonly retryAtMs: number }
  | { readonly kind: 'closed' };

const CLIENT_INFO = { name: 'turn-runtime', version: '0.1.0' };
const CONNECTION_CLOSED: number = ErrorCode.ConnectionClosed;
const MAX_NAMESPACE_DESCRIPTION_CHARS = 2_000;
/**
 * A lost session is reopened at its next use, with no wait: a server that died once costs no
 * turn its tools. But a session lost within this time of opening, after the one before it was
 * too, counts as a failure and waits out the backoff (doubling with each such loss in a row),
 * so a server that dies as it starts is not restarted in a loop.
 */
export const STABLE_SESSION_MS = 10_000;

/**
 * One agent's link to one configured MCP server (see `McpRegistry`): connects on first use,
 * lists and projects the tools once per listing, relists when the server announces
 * `notifications/tools/list_changed`, re-initializes an HTTP session the server forgot, and
 * after a failure waits (doubling, capped) before it tries again, so a dead server costs each
 * turn nothing but a warning.
 */
export class McpServerConnection {
  readonly name: string;
  readonly #config: McpServerConfig;
  readonly #settings: McpConnectionSettings;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** A stdio server's own working folder, made on first connect (unless the config names one). */
  readonly #workingFolder: string | undefined;
  #state: State = { kind: 'idle' };
  #failures = 0;
  /** Sessions lost in a row within `STABLE_SESSION_MS` of opening. */
  #earlyLosses = 0;
  #projected: ReadonlyMap<string, ProjectedMcpTool> = new Map();
  /** What the projected tools call: the registry's route to whichever connection serves their agent now. */
  readonly #callTool: McpToolCaller;
  readonly #schemas: McpSchemaInterner | undefined;

  constructor(options: {
    name: string;
    config: McpServerConfig;
    settings: McpConnectionSettings;
    clock: Clock;
    logger: Logger;
    callTool: McpToolCaller;
    /** Shared by the server's connections (every agent's), so equal schemas compile once. */
    schemas?: McpSchemaInterner;
    workingFolder?: string;
  }) {
    this.name = options.name;
    this.#config = options.config;
    this.#settings = options.settings;
    this.#clock = options.clock;
    this.#logger = options.logger.child({ mcpServer: options.name });
    this.#callTool = options.callTool;
    this.#workingFolder = options.workingFolder;
    this.#schemas = options.schemas;
  }

  /** True while a session is open or opening (a stdio process may be running). */
  get holdsSession(): boolean {
    return this.#state.kind === 'live' || this.#state.kind === 'connecting';
  }

  /**
   * The server's tools, as the same objects for as long as their definitions do not change.
   * Rejects with `McpUnavailableError` when the server is down, failing, or slower than `signal`.
   */
  async tools(signal: AbortSignal): Promise<readonly WorkerAgentTool[]> {
    const listed = this.#session().then((session) => session.listing ?? Promise.reject(new Error('the server has no tool listing')));
    try {
      return await waitUnlessAborted(listed, signal, () => new McpUnavailableError(this.name, 'the server did not answer in time'));
    } catch (error) {
      throw error instanceof McpUnavailableError ? error : new McpUnavailableError(this.name, describeMcpFailure(error));
    }
  }

  /** Ends the session (a stdio server's process with it); later calls find the server unavailable. */
  async close(): Promise<void> {
    const state = this.#state;
    this.#state = { kind: 'closed' };
    if (state.kind === 'live') await this.#end(state.session);
    if (state.kind === 'connecting') await state.client.close().catch(() => undefined);
  }

  #session(): Promise<Session> {
    const state = this.#state;
    switch (state.kind) {
      case 'live':
        return Promise.resolve(state.session);
      case 'connecting':
        return state.ready;
      case 'closed':
        return Promise.reject(new McpUnavailableError(this.name, 'the runtime is shutting down'));
      case 'failed': {
        const waitMs = state.retryAtMs - this.#clock.monotonicMs();
        if (waitMs > 0) return Promise.reject(new McpUnavailableError(this.name, `${state.reason}; next attempt in ${Math.ceil(waitMs / 1000)} s`));
        break;
      }
      case 'idle':
        break;
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const ready = this.#connect(client);
    this.#state = { kind: 'connecting', ready, client };
    // Waiters come and go with their turns; the attempt's own outcome is handled in #connect.
    ready.catch(() => undefined);
    return ready;
  }

  async #connect(client: Client): Promise<Session> {
    let config = this.#config;
    if (config.transport === 'stdio' && config.cwd === undefined && this.#workingFolder !== undefined) {
      // The folders above it may be made here first, before the agent's home: passable (0711)
      // as the home's are, so the sandbox user still reaches the home (see agent-home.ts).
      await mkdir(path.dirname(this.#workingFolder), { recursive: true, mode: 0o711 });
      await mkdir(this.#workingFolder, { recursive: true, mode: 0o700 });
      config = { ...config, cwd: this.#workingFolder };
    }
    const transport = createMcpTransport(config);
    const session: Session = { client, transport, connectedAtMs: 0, listing: undefined, refreshQueued: false, ended: false };
    client.onclose = () => {
      this.#lose(session, 'the server closed the connection');
    };
    client.onerror = (error) => {
      this.#logger.debug({ err: error }, 'MCP transport error');
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#refresh(session);
    });
    try {
      await client.connect(transport.transport, { timeout: this.#settings.connectTimeoutMs });
      session.listing = this.#list(session);
      await session.listing;
    } catch (error) {
      session.ended = true;
      await client.close().catch(() => undefined);
      const reason = describeMcpFailure(error);
      const stderr = transport.stderrTail().trim();
      this.#logger.debug({ err: error, ...(stderr === '' ? {} : { stderr }) }, `could not connect to the MCP server: ${reason}`);
      if (this.#state.kind !== 'closed') this.#fail(reason);
      throw new McpUnavailableError(this.name, reason);
    }
    if (this.#state.kind === 'closed') {
      await this.#end(session);
      throw new McpUnavailableError(this.name, 'the runtime is shutting down');
    }
    this.#state = { kind: 'live', session };
    session.connectedAtMs = this.#clock.monotonicMs();
    this.#failures = 0;
    this.#logger.info('connected to the MCP server');
    return session;
  }

  /** Lists and projects the tools; unchanged tools keep their objects. */
  async #list(session: Session): Promise<readonly WorkerAgentTool[]> {
    const listing = await listMcpTools({ client: session.client, timeoutMs: this.#settings.connectTimeoutMs });
    const projected = projectMcpTools({
      server: this.name,
      namespaceDescription: this.#namespaceDescription(session.client),
      listing,
      previous: this.#projected,
      callTool: this.#callTool,
      ...(this.#schemas === undefined ? {} : { schemas: this.#schemas }),
    });
    this.#projected = projected.byOriginalName;
    for (const skipped of projected.skipped) {
      this.#logger.warn({ tool: skipped.tool }, `an MCP tool was left out: ${skipped.reason}`);
    }
    return projected.tools;
  }

  /** Relists after a change notification; notifications that arrive meanwhile share one relisting. */
  #refresh(session: Session): void {
    const previous = session.listing;
    // Before the first listing there is nothing to refresh: that listing is still to come.
    if (session.ended || previous === undefined || session.refreshQueued) return;
    session.refreshQueued = true;
    const next = previous
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        session.refreshQueued = false;
        return this.#list(session);
      });
    session.listing = next;
    next.catch((error: unknown) => {
      this.#lose(session, `relisting its tools failed: ${describeMcpFailure(error)}`);
    });
  }

  /**
   * Sends one call on this agent's session (opening it if needed). A Streamable HTTP server
   * that forgot the session (restarted) refused the request before running it: the session
   * is opened anew and the call sent once more.
   */
  async call(call: McpToolCall): Promise<CallToolResult> {
    const session = await this.#sessionFor(call);
    try {
      return await this.#send(session, call);
    } catch (error) {
      if (call.signal.aborted || !isStaleHttpSession(error)) throw this.#callFailure(session, call, error);
      this.#logger.info('the server forgot the session; opening a new one');
      this.#retire(session);
    }
    const fresh = await this.#sessionFor(call);
    try {
      return await this.#send(fresh, call);
    } catch (error) {
      throw this.#callFailure(fresh, call, error);
    }
  }

  async #sessionFor(call: McpToolCall): Promise<Session> {
    try {
      return await waitUnlessAborted(this.#session(), call.signal, () => abortError(call.signal));
    } catch (error) {
      if (error instanceof McpUnavailableError) throw new Error(`the MCP server "${this.name}" is unavailable: ${error.message}`, { cause: error });
      throw error;
    }
  }

  #send(session: Session, call: McpToolCall): Promise<CallToolResult> {
    if (call.asTask) {
      return callMcpTask({
        client: session.client,
        tool: call.tool,
        arguments: call.arguments,
        signal: call.signal,
        requestTimeoutMs: this.#settings.connectTimeoutMs,
        onStatus: call.onTaskStatus,
      });
    }
    // A plain request rather than `callTool`: that one checks output schemas it caches from
    // `listTools`, which is not used here (see list-mcp-tools.ts); structured content is
    // kept as details, not enforced.
    return session.client.request({ method: 'tools/call', params: { name: call.tool, arguments: call.arguments } }, CallToolResultSchema, {
      signal: call.signal,
      timeout: this.#settings.callTimeoutMs,
    });
  }

  /** The error a failed call throws; a broken connection also ends the session. */
  #callFailure(session: Session, call: McpToolCall, error: unknown): unknown {
    if (call.signal.aborted) return error;
    if (error instanceof McpError && error.code !== CONNECTION_CLOSED) {
      return new Error(`${this.name}.${call.tool} failed: ${describeMcpFailure(error)}`, { cause: error });
    }
    const reason = describeMcpFailure(error);
    this.#lose(session, reason);
    return new Error(`the MCP server "${this.name}" could not be reached: ${reason}`, { cause: error });
  }

  /** Ends a session the server no longer knows; the next use opens a new one at once. */
  #retire(session: Session): void {
    if (this.#state.kind === 'live' && this.#state.session === session) this.#state = { kind: 'idle' };
    void this.#end(session);
  }

  /**
   * A live session broke: end it, and reopen it at its next use, unless it is the second
   * session in a row lost soon after opening (see `STABLE_SESSION_MS`): then wait, 1 s for
   * the second, doubling for each further one.
   */
  #lose(session: Session, reason: string): void {
    if (session.ended) return;
    void this.#end(session);
    if (this.#state.kind === 'live' && this.#state.session === session) {
      const early = this.#clock.monotonicMs() - session.connectedAtMs < STABLE_SESSION_MS;
      this.#earlyLosses = early ? this.#earlyLosses + 1 : 0;
      const reopen = this.#earlyLosses <= 1;
      if (reopen) {
        this.#state = { kind: 'idle' };
      } else {
        this.#failures = this.#earlyLosses - 2;
        this.#fail(reason);
      }
      const stderr = session.transport.stderrTail().trim();
      this.#logger.warn(stderr === '' ? {} : { stderr }, `lost the MCP server: ${reason}${reopen ? '; reopening it at its next use' : ''}`);
    }
  }

  async #end(session: Session): Promise<void> {
    session.ended = true;
    await session.client.close().catch(() => undefined);
  }

  #fail(reason: string): void {
    this.#failures += 1;
    const waitMs = Math.min(this.#settings.retryInitialMs * 2 ** (this.#failures - 1), this.#settings.retryMaxMs);
    this.#state = { kind: 'failed', reason, retryAtMs: this.#clock.monotonicMs() + waitMs };
  }

  #namespaceDescription(client: Client): string {
    const instructions = client.getInstructions()?.trim() ?? '';
    if (instructions !== '') {
      return instructions.length <= MAX_NAMESPACE_DESCRIPTION_CHARS ? instructions : `${instructions.slice(0, MAX_NAMESPACE_DESCRIPTION_CHARS - 1)}…`;
    }
    const info = client.getServerVersion();
    const title = info?.title ?? info?.name;
    return `Tools of the MCP server "${this.name}"${title === undefined || title === this.name ? '' : ` (${title.slice(0, 200)})`}.`;
  }
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the call was cancelled');
}
