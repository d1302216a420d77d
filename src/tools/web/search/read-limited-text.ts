/** A body's text, or `tooLarge` once it passes `maxBytes` (the rest is never read). */
export type LimitedText = { readonly tooLarge: false; readonly text: string } | { readonly tooLarge: true };

/**
 * Reads a response body as UTF-8 text without holding more than `maxBytes` of it. The limit
 * counts decoded bytes, so a small compressed body that inflates past it is cut as well.
 */
export async function readLimitedText(options: { response: Response; maxBytes: number }): Promise<LimitedText> {
  const { response, maxBytes } = options;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes && response.headers.get('content-encoding') === null) {
    await response.body?.cancel().catch(() => undefined);
    return { tooLarge: true };
  }
  if (response.body === null) return { tooLarge: false, text: '' };

  // Node's typings leave the chunk type open; fetch bodies are byte streams.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder('utf-8');
  let received = 0;
  let text = '';
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    received += chunk.value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { tooLarge: true };
    }
    text += decoder.decode(chunk.value, { stream: true });
  }
  return { tooLarge: false, text: text + decoder.decode() };
}
