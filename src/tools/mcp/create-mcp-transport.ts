import type { Readable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from './mcp-config.js';

/** The last bytes a stdio server wrote to stderr, to say why it died. */
const STDERR_TAIL_CHARS = 2_000;

export interface McpTransport {
  readonly transport: Transport;
  /** The end of what a stdio server wrote to stderr so far ('' for HTTP). */
  stderrTail(): string;
}

/**
 * The client transport for a configured server. A stdio server's stderr is captured (its
 * last lines explain a crash) instead of being mixed into this service's own output.
 */
export function createMcpTransport(config: McpServerConfig): McpTransport {
  if (config.transport === 'http') {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    return { transport, stderrTail: () => '' };
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: config.env,
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
    stderr: 'pipe',
  });
  let tail = '';
  // With `stderr: 'pipe'` the stream exists before start(), so early output is not lost.
  (transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
  });
  return { transport, stderrTail: () => tail };
}
