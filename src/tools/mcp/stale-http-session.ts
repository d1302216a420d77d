import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * True when a Streamable HTTP server no longer knows the session a request named: the
 * server restarted or dropped it. The spec has it answer 404 (the client must then start
 * a new session); many servers, the reference one among them, answer 400 "No valid session
 * ID provided". Either way the request was refused before it ran, so it can be sent again
 * on a new session.
 */
export function isStaleHttpSession(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}
