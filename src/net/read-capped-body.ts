import type { IncomingMessage } from 'node:http';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { WebRequestError } from './web-request-error.js';

export interface CappedBody {
  /** The decoded body, at most `maxBytes` long. */
  readonly body: Buffer;
  /** The body went on past the cap and was cut there (the connection was closed). */
  readonly truncated: boolean;
  /** Bytes that came over the wire, before decoding. */
  readonly wireBytes: number;
}

/** Thrown inside the pipeline to stop it once the cap is reached; never leaves this file. */
class BodyCapReached extends Error {}

/**
 * Reads a response body, decoding gzip/br/deflate, and stops at `maxBytes` counted both on
 * the wire and after decoding: the first stops a server that streams forever, the second a
 * small compressed bomb that inflates to gigabytes. Decoding runs under back-pressure, so
 * at most about one zlib chunk is inflated past the cap before everything is torn down.
 * Stopping destroys the response, which closes the socket.
 */
export async function readCappedBody(options: {
  readonly response: IncomingMessage;
  readonly maxBytes: number;
  readonly signal: AbortSignal;
}): Promise<CappedBody> {
  const { response, maxBytes } = options;
  const decoders = contentDecoders(response.headers['content-encoding']);
  let wireBytes = 0;
  let truncated = false;
  const chunks: Buffer[] = [];
  let size = 0;

  // Without a content coding the collector's cap is the wire cap, and exact; with one, the
  // wire cap stops a body that never decodes to much (the cut may then land a chunk short).
  const capWire = decoders.length > 0;
  const wireCounter = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      wireBytes += chunk.length;
      if (capWire && wireBytes > maxBytes) {
        truncated = true;
        callback(new BodyCapReached());
        return;
      }
      callback(null, chunk);
    },
  });
  const collector = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        truncated = true;
        callback(new BodyCapReached());
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      callback();
    },
  });

  try {
    await pipeline([response, wireCounter, ...decoders, collector], { signal: options.signal });
  } catch (error) {
    if (!(error instanceof BodyCapReached)) {
      response.destroy();
      throw bodyError(error, response.headers['content-encoding']);
    }
    response.destroy();
  }
  return { body: Buffer.concat(chunks, size), truncated, wireBytes };
}

function contentDecoders(header: string | undefined): Transform[] {
  if (header === undefined) return [];
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  // Codings are listed in the order they were applied, so they are undone in reverse.
  return codings.reverse().map((coding) => {
    switch (coding) {
      case 'gzip':
      case 'x-gzip':
        return createGunzip();
      case 'br':
        return createBrotliDecompress();
      case 'deflate':
        return createInflate();
      default:
        throw new WebRequestError('decode', `the server used a content encoding that cannot be decoded ("${coding}")`);
    }
  });
}

function bodyError(error: unknown, encoding: string | undefined): unknown {
  if (error instanceof WebRequestError) return error;
  if (error instanceof Error && 'name' in error && error.name === 'AbortError') return error;
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  if (code.startsWith('Z_') || code === 'ERR_BROTLI_DECOMPRESSION_FAILED' || /zlib|brotli|header check/i.test(String(error))) {
    return new WebRequestError('decode', `the ${encoding ?? ''} response body could not be decoded`, { cause: error });
  }
  return new WebRequestError('network', 'the connection closed before the whole body arrived', { cause: error });
}
