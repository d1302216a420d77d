export type StreamFormat = 'sse' | 'ndjson' | 'json';

const TYPES: Record<string, StreamFormat> = {
  'text/event-stream': 'sse',
  'application/x-ndjson': 'ndjson',
  'application/json': 'json',
  '*/*': 'sse',
  'text/*': 'sse',
  'application/*': 'json',
};

/**
 * Picks the answer format from `Accept`, by quality then by order: Server-Sent Events for
 * `text/event-stream`, `*\/*` or no header; NDJSON; or JSON after the end. `undefined` when
 * nothing acceptable is offered.
 */
export function negotiateStreamFormat(accept: string | undefined): StreamFormat | undefined {
  if (accept === undefined || accept.trim() === '') return 'sse';
  let best: { format: StreamFormat; quality: number } | undefined;
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const format = TYPES[type];
    if (format === undefined) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(quality) || quality <= 0) continue;
    if (best === undefined || quality > best.quality) best = { format, quality };
  }
  return best?.format;
}
