/**
 * Turns body bytes into text: a byte-order mark wins, then the header's charset, then (for
 * HTML) a `<meta charset>` near the top, then UTF-8. Unknown charsets fall back to UTF-8
 * and malformed bytes become U+FFFD rather than failing the fetch.
 */
export function decodeText(options: { readonly body: Buffer; readonly charset: string | undefined; readonly html: boolean }): string {
  const { body } = options;
  const label = byteOrderMark(body) ?? options.charset ?? (options.html ? metaCharset(body) : undefined) ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function byteOrderMark(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return undefined;
}

function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  const match = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head);
  return match?.[1]?.toLowerCase();
}
