import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

const MAX_REASON_CHARS = 300;
// `McpError.code` is a plain number; these are the SDK's codes as numbers to compare with.
const REQUEST_TIMEOUT: number = ErrorCode.RequestTimeout;
const CONNECTION_CLOSED: number = ErrorCode.ConnectionClosed;

/**
 * Why talking to a server failed, in words for the turn's `unavailableSources` and the model.
 * It names the kind of failure (not found, refused, timed out, closed) but never the URL or
 * headers, which may hold credentials; the server's stderr goes to the log, not here.
 */
export function describeMcpFailure(error: unknown): string {
  if (error instanceof McpError) {
    if (error.code === REQUEST_TIMEOUT) return 'the server did not answer in time';
    if (error.code === CONNECTION_CLOSED && /connection closed/i.test(error.message)) return 'the server closed the connection';
    return cap(error.message);
  }
  // The SDK's stdio transport says this when the process is already gone.
  if (error instanceof Error && error.message === 'Not connected') return 'the server closed the connection';
  const code = errorCode(error);
  if (error instanceof Error && 'syscall' in error && typeof error.syscall === 'string' && error.syscall.startsWith('spawn')) {
    return code === 'ENOENT' ? 'the server command was not found' : `the server command could not be started (${code ?? error.message})`;
  }
  if (code !== undefined) return `could not connect to the server (${code})`;
  return cap(error instanceof Error ? error.message : String(error));
}

/** `ECONNREFUSED` and the like, from the error or its cause (fetch wraps them). */
function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

function cap(text: string): string {
  return text.length <= MAX_REASON_CHARS ? text : `${text.slice(0, MAX_REASON_CHARS - 1)}…`;
}
