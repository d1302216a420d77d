import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Texts shorter than this are kept as plain strings, not in a KeptItemText: the bench's function calls and messages are 100–300
 * characters, which deflate saves little of, and a turn of them holds a few kilobytes at most.
 */
export const MIN_DEFLATED_CHARS = 1024;

/**
 * Deflating must save at least this fraction of the text to be kept: text that does not
 * compress (base64, already compressed data) is kept as it is, and not tried again.
 */
const MIN_SAVING = 0.2;

/**
 * The raw deflate settings: level 1, the fastest. Measured here on 22–33 KB of source and JSON
 * it took 0.4× the default level's time for 10–15% more bytes; at 3.5 KB (a bench file read)
 * the ~30 µs of setting up each call is most of the cost at any level. A 16 KiB window instead
 * of 32 halves the state each call allocates, and lost under 1.5% there.
 */
const DEFLATE = { level: 1, windowBits: 14, memLevel: 8, strategy: constants.Z_DEFAULT_STRATEGY } as const;
const INFLATE = { windowBits: 14 } as const;

/**
 * The JSON text of one conversation item, kept between the model requests that carry it: as
 * text while the turn is busy, deflated once a request carrying it has waited on the model (see
 * waiting-request.ts). A turn waiting on its model holds little but its conversation, and its
 * tool outputs are most of that: the bench's eight file reads are 28 KB of JSON text per turn.
 *
 * Deflated, it is kept as a one-byte string (the deflated bytes as Latin-1), not a Buffer, for
 * the reason item-json.ts keeps text rather than bytes: V8 compacts strings with the rest of its
 * heap, while long-lived buffers scattered among short-lived ones keep malloc's pages. A request
 * that carries a deflated item inflates it into the body's text, and the item stays deflated.
 */
export class KeptItemText {
  #text: string | undefined;
  #deflated: string | undefined;
  /** The text's UTF-8 length, once deflated: what inflating it gives. */
  #byteLength = 0;
  /** Set once deflating was tried (and kept, or found not to pay). */
  #tried = false;

  constructor(text: string) {
    this.#text = text;
  }

  get isDeflated(): boolean {
    return this.#deflated !== undefined;
  }

  /** The length of the string held: the text's, or the deflated bytes' (one byte per character). */
  get heldLength(): number {
    return (this.#text ?? this.#deflated ?? '').length;
  }

  /** The text, inflated if it is kept deflated (it stays deflated). */
  text(): string {
    return this.#text ?? this.#inflate().toString('utf8');
  }

  /** Deflates the text, once, if deflating it saves enough. */
  deflate(): void {
    const text = this.#text;
    if (this.#tried || text === undefined) return;
    this.#tried = true;
    const bytes = Buffer.from(text, 'utf8');
    const deflated = deflateRawSync(bytes, { ...DEFLATE, chunkSize: outputChunk(bytes.byteLength / 2) });
    // Compared with the characters: a one-byte string holds a byte per character, a two-byte one two.
    if (deflated.byteLength > text.length * (1 - MIN_SAVING)) return;
    this.#deflated = deflated.toString('latin1');
    this.#byteLength = bytes.byteLength;
    this.#text = undefined;
  }

  #inflate(): Buffer {
    // One output chunk of the known size (and a little room, so zlib sees the end without asking for another).
    return inflateRawSync(Buffer.from(this.#deflated ?? '', 'latin1'), { ...INFLATE, chunkSize: outputChunk(this.#byteLength + 64) });
  }
}

/**
 * zlib's output chunk for a call expected to make about `bytes`. Its default, 16 KiB, is one
 * malloc'd buffer per call that lives until V8 collects the Buffer over it: with a thousand turns
 * deflating at once, tens of megabytes of them waited for a collection, and malloc kept the
 * pages they left (the service's RSS stayed ~65 MB higher while its heap was 90 MB smaller).
 */
function outputChunk(bytes: number): number {
  return Math.max(constants.Z_MIN_CHUNK, Math.ceil(bytes));
}
