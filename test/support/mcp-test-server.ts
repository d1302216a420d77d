import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** What the server saw, for tests to wait on: `started slow`, `cancelled slow`, `called lookup` … */
export type TestServerEvent = string;

/** A 1×1 transparent PNG. */
export const TINY_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

export const TEST_SERVER_INSTRUCTIONS = 'Inventory of the Acme warehouse: look items up, delete them, take snapshots.';

/**
 * A real MCP server (the SDK's `McpServer`) with the tools the MCP tests need: a read-only
 * `lookup` with integer bounds, a destructive `delete_item`, `fail` (answers `isError`),
 * `slow` (waits until cancelled), `get.user` (a name providers reject), `snapshot` (an
 * image), `resources` (a link and an embedded resource), `broken_schema` (a pattern Ajv
 * refuses), `enable_extra` (turns on `extra_tool`, so the server announces a list change)
 * and, with `canExit` (the stdio process), `exit_process`, after which the process dies, and
 * `where` (the process id and working folder, as JSON).
 */
export function createTestMcpServer(
  options: { readonly onEvent?: (event: TestServerEvent) => void; readonly canExit?: boolean } = {},
): { server: McpServer; extraTool: RegisteredTool } {
  const record = options.onEvent ?? (() => undefined);
  const server = new McpServer({ name: 'acme-inventory', version: '1.0.0' }, { instructions: TEST_SERVER_INSTRUCTIONS });

  server.registerTool(
    'lookup',
    {
      description: 'Looks an inventory item up by its number.',
      inputSchema: { id: z.number().int().min(1).max(100).describe('The item number, 1 to 100.') },
      annotations: { readOnlyHint: true },
    },
    ({ id }) => {
      record(`called lookup ${id}`);
      return { content: [{ type: 'text', text: `item ${id}: widget-${id}, 3 in stock` }], structuredContent: { id, name: `widget-${id}`, stock: 3 } };
    },
  );
  server.registerTool(
    'delete_item',
    { description: 'Deletes an inventory item.', inputSchema: { id: z.string().min(1) }, annotations: { destructiveHint: true } },
    ({ id }) => {
      record(`called delete_item ${id}`);
      return { content: [{ type: 'text', text: `deleted ${id}` }] };
    },
  );
  server.registerTool(
    'update_note',
    { description: 'Changes the note on an item (no annotations at all).', inputSchema: { note: z.string() } },
    ({ note }) => ({ content: [{ type: 'text', text: `noted: ${note}` }] }),
  );
  server.registerTool('fail', { description: 'Always fails.', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({
    isError: true,
    content: [{ type: 'text', text: 'item 7 is locked by another user' }],
  }));
  server.registerTool(
    'slow',
    { description: 'Waits a minute unless cancelled.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async (_arguments, extra) => {
      record('started slow');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 60_000);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          record('cancelled slow');
          resolve();
        }, { once: true });
      });
      return { content: [{ type: 'text', text: 'slow finished' }] };
    },
  );
  server.registerTool(
    'get.user',
    { description: 'Reads a user by name.', inputSchema: { name: z.string() }, annotations: { readOnlyHint: true, destructiveHint: false } },
    ({ name }) => ({ content: [{ type: 'text', text: `user ${name} is active` }] }),
  );
  server.registerTool('snapshot', { description: 'Takes a snapshot of the shelf.', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({
    content: [
      { type: 'text', text: 'shelf 4' },
      { type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' },
    ],
  }));
  server.registerTool('resources', { description: 'Points at the manual.', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({
    content: [
      { type: 'resource_link', uri: 'file:///manuals/shelf.pdf', name: 'shelf manual', mimeType: 'application/pdf', description: 'How to stack shelves' },
      { type: 'resource', resource: { uri: 'file:///notes/today.txt', mimeType: 'text/plain', text: 'restock aisle 3' } },
    ],
  }));
  server.registerTool(
    'broken_schema',
    // `\-` outside a class is fine for JavaScript but not in a Unicode pattern, so Ajv refuses the schema.
    // eslint-disable-next-line no-useless-escape
    { description: 'Has a schema no validator accepts.', inputSchema: { code: z.string().regex(/^a\-b$/) } },
    () => ({ content: [{ type: 'text', text: 'unreachable' }] }),
  );
  const extra = server.registerTool('extra_tool', { description: 'Appears after enable_extra.', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({
    content: [{ type: 'text', text: 'extra!' }],
  }));
  extra.disable();
  server.registerTool('enable_extra', { description: 'Turns extra_tool on.', inputSchema: {} }, () => {
    extra.enable();
    return { content: [{ type: 'text', text: 'extra_tool enabled' }] };
  });
  if (options.canExit === true) {
    server.registerTool('exit_process', { description: 'Ends the server process.', inputSchema: {} }, () => {
      setTimeout(() => process.exit(3), 10);
      return { content: [{ type: 'text', text: 'exiting' }] };
    });
    server.registerTool('where', { description: 'Says which process serves the session, and its working folder.', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: 'text', text: JSON.stringify({ pid: process.pid, cwd: process.cwd() }) }],
    }));
  }
  return { server, extraTool: extra };
}

export interface TestMcpHttpServer {
  /** The Streamable HTTP endpoint. */
  readonly url: string;
  readonly events: readonly TestServerEvent[];
  /** Resolves once `event` has been seen (already seen counts). */
  waitForEvent(event: TestServerEvent): Promise<void>;
  /** Requests received, for tests that check a dead-server backoff. */
  readonly requests: number;
  /** Headers of the first request, to check configured headers are sent. */
  readonly firstHeaders: IncomingMessage['headers'] | undefined;
  /** Announces a tool list change by enabling `extra_tool` on every session. */
  enableExtraTool(): void;
  /** Sessions initialized so far. */
  readonly sessionsOpened: number;
  /** Forgets every session, as a restarted server would: requests naming one get 404. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

/** The test server over Streamable HTTP on 127.0.0.1, in this process: one `McpServer` per session. */
export async function startTestMcpHttpServer(): Promise<TestMcpHttpServer> {
  const events: TestServerEvent[] = [];
  const waiters: { event: string; resolve: () => void }[] = [];
  const onEvent = (event: TestServerEvent) => {
    events.push(event);
    for (const waiter of waiters.filter((candidate) => candidate.event === event)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer; extraTool: RegisteredTool }>();
  const sockets = new Set<Socket>();
  let requests = 0;
  let sessionsOpened = 0;
  let firstHeaders: IncomingMessage['headers'] | undefined;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    requests += 1;
    firstHeaders ??= request.headers;
    const sessionId = request.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing !== undefined) {
      await existing.transport.handleRequest(request, response);
      return;
    }
    if (request.method !== 'POST' || typeof sessionId === 'string') {
      response.writeHead(typeof sessionId === 'string' ? 404 : 400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
      return;
    }
    const { server, extraTool } = createTestMcpServer({ onEvent });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessionsOpened += 1;
        sessions.set(id, { transport, server, extraTool });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };
  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    events,
    waitForEvent: (event) =>
      events.includes(event)
        ? Promise.resolve()
        : new Promise((resolve) => {
            waiters.push({ event, resolve });
          }),
    get requests() {
      return requests;
    },
    get firstHeaders() {
      return firstHeaders;
    },
    enableExtraTool() {
      for (const { extraTool } of sessions.values()) extraTool.enable();
    },
    get sessionsOpened() {
      return sessionsOpened;
    },
    async forgetSessions() {
      const forgotten = [...sessions.values()];
      sessions.clear();
      await Promise.all(forgotten.map(({ server }) => server.close().catch(() => undefined)));
    },
    async close() {
      await Promise.all([...sessions.values()].map(({ server }) => server.close().catch(() => undefined)));
      sessions.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        http.close(() => {
          resolve();
        });
      });
    },
  };
}

/** This file, for `node --import tsx <file>` (the stdio server). */
export const TEST_MCP_SERVER_SCRIPT = fileURLToPath(import.meta.url);
/** The repository root, as the stdio server's `cwd` in the sandbox so `--import tsx` resolves. */
export const REPOSITORY_ROOT = path.resolve(path.dirname(TEST_MCP_SERVER_SCRIPT), '..', '..');
/** tsx's loader by its URL: the server then starts from any working folder (each agent's own). */
const TSX_LOADER = import.meta.resolve('tsx');

/**
 * The stdio server's launch settings. With `eventsFile`, the server appends each event
 * (`started slow`, `cancelled slow` …) as a line there, so a test can see what it saw. With
 * `inSandbox`, it is started from a command in the sandbox (by mcporter), where the service's
 * Node is `node` on PATH and this process's path to it may not exist.
 */
export function stdioTestServer(options: { readonly eventsFile?: string; readonly inSandbox?: boolean } = {}): {
  transport: 'stdio';
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
} {
  const env = options.eventsFile === undefined ? {} : { MCP_TEST_EVENTS_FILE: options.eventsFile };
  if (options.inSandbox === true) return { transport: 'stdio', command: 'node', args: ['--import', 'tsx', TEST_MCP_SERVER_SCRIPT], cwd: REPOSITORY_ROOT, env };
  return { transport: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, TEST_MCP_SERVER_SCRIPT], env };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === TEST_MCP_SERVER_SCRIPT) {
  const eventsFile = process.env['MCP_TEST_EVENTS_FILE'];
  const { server } = createTestMcpServer({
    canExit: true,
    onEvent: (event) => {
      if (eventsFile !== undefined) appendFileSync(eventsFile, `${event}\n`);
    },
  });
  await server.connect(new StdioServerTransport());
}
