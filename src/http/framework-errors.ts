import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope } from './error-envelope.js';

/**
 * Errors Fastify's router raises before any route runs (bad percent-encoding, a path segment
 * over the router's limit), answered in the error envelope instead of Fastify's own body.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_BAD_URL') {
    void reply.code(400).send(errorEnvelope('invalid_request', 'the URL is not valid: a path segment has malformed percent-encoding'));
    return;
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void reply.code(400).send(errorEnvelope('invalid_request', 'a path segment of the URL is too long (ids are at most 200 characters)'));
    return;
  }
  request.log.error({ err: error }, 'router error');
  void reply.code(500).send(errorEnvelope('internal_error', 'the server failed to route this request'));
}

const CLIENT_ERRORS: Partial<Record<string, { status: number; code: string; message: string }>> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', message: 'the request was not received in time; send the whole request promptly' },
  ERR_HTTP_HEADERS_TIMEOUT: { status: 408, code: 'request_timeout', message: 'the request headers were not received in time' },
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', message: 'the request headers are larger than this server accepts' },
};

/**
 * Requests Node's HTTP parser refuses (malformed headers, a bad Content-Length, too-large
 * headers) or that time out while arriving: answered, where the socket still lets us, in the
 * error envelope, then closed. No route ran, so nothing else was done.
 */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = error.code === undefined ? undefined : CLIENT_ERRORS[error.code];
  const answer = known ?? { status: 400, code: 'invalid_request', message: `the request could not be parsed as HTTP/1.1${error.code === undefined ? '' : ` (${error.code})`}` };
  const body = JSON.stringify(errorEnvelope(answer.code, answer.message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
