/** One field of a document: its terms (with repeats) and how much a match in it counts. */
export interface Bm25Field {
  readonly terms: readonly string[];
  readonly weight: number;
}

export interface Bm25Document {
  readonly fields: readonly Bm25Field[];
}

/** A document folded into its distinct terms, their weighted frequencies, and its weighted length. */
export interface PreparedBm25Document {
  readonly terms: readonly string[];
  readonly frequencies: readonly number[];
  readonly length: number;
}

/**
 * Folds a document's fields. Depends on the document alone, so a caller that sees the same
 * document in several indexes (the same tool in many turns) prepares it once.
 */
export function prepareBm25Document(document: Bm25Document): PreparedBm25Document {
  const folded = new Map<string, number>();
  let length = 0;
  for (const field of document.fields) {
    length += field.weight * field.terms.length;
    for (const term of field.terms) folded.set(term, (folded.get(term) ?? 0) + field.weight);
  }
  return { terms: [...folded.keys()], frequencies: [...folded.values()], length };
}

export interface Bm25Hit {
  /** The document's position in the array the index was built from. */
  readonly document: number;
  readonly score: number;
}

export interface Bm25Index {
  readonly size: number;
  /** The best `limit` documents for the query terms, best first; only documents that match. */
  search(options: { readonly terms: readonly string[]; readonly limit: number }): Bm25Hit[];
}

/** Robertson's defaults, which suit short texts such as tool descriptions well enough. */
const DEFAULT_K1 = 1.2;
const DEFAULT_B = 0.75;

interface Posting {
  readonly documents: number[];
  readonly frequencies: number[];
}

/**
 * An in-memory BM25 index over weighted fields (the "simple BM25F" of Robertson, Zaragoza &
 * Taylor 2004): a term's frequency in a document is the weighted sum of its frequencies per
 * field, and so is the document's length, before the usual saturation and length
 * normalisation. A match in a heavy field (a tool's name) therefore counts for more than the
 * same match in a light one (a parameter name), and a long description does not win by
 * repetition alone.
 *
 * Built once per document set; a search touches only the postings of its own terms, so it is
 * proportional to the matches, not to the size of the catalog.
 */
export function createBm25Index(options: {
  readonly documents: readonly (Bm25Document | PreparedBm25Document)[];
  readonly k1?: number;
  readonly b?: number;
}): Bm25Index {
  const documents = options.documents.map((document) => ('fields' in document ? prepareBm25Document(document) : document));
  const k1 = options.k1 ?? DEFAULT_K1;
  const b = options.b ?? DEFAULT_B;
  const postings = new Map<string, Posting>();
  const lengths = new Float64Array(documents.length);
  let totalLength = 0;

  documents.forEach((document, index) => {
    lengths[index] = document.length;
    totalLength += document.length;
    const { terms, frequencies } = document;
    for (let position = 0; position < terms.length; position += 1) {
      const term = terms[position] ?? '';
      let posting = postings.get(term);
      if (posting === undefined) {
        posting = { documents: [], frequencies: [] };
        postings.set(term, posting);
      }
      posting.documents.push(index);
      posting.frequencies.push(frequencies[position] ?? 0);
    }
  });
  const count = documents.length;
  const averageLength = count === 0 || totalLength === 0 ? 1 : totalLength / count;
  // The length part of the denominator depends on the document only: computed once.
  const lengthNorm = lengths.map((length) => k1 * (1 - b + (b * length) / averageLength));

  const search = ({ terms, limit }: { readonly terms: readonly string[]; readonly limit: number }): Bm25Hit[] => {
    if (limit <= 0 || count === 0) return [];
    const scores = new Float64Array(count);
    const touched: number[] = [];
    for (const term of new Set(terms)) {
      const posting = postings.get(term);
      if (posting === undefined) continue;
      const matching = posting.documents.length;
      // The "plus one" form of the IDF never goes negative, so a common term never hurts.
      const idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
      for (let position = 0; position < matching; position += 1) {
        const document = posting.documents[position] ?? 0;
        const frequency = posting.frequencies[position] ?? 0;
        if (scores[document] === 0) touched.push(document);
        scores[document] = (scores[document] ?? 0) + (idf * frequency * (k1 + 1)) / (frequency + (lengthNorm[document] ?? k1));
      }
    }
    // Ties keep document order (assembly order), so results are stable.
    touched.sort((left, right) => (scores[right] ?? 0) - (scores[left] ?? 0) || left - right);
    return touched.slice(0, limit).map((document) => ({ document, score: scores[document] ?? 0 }));
  };

  return { size: count, search };
}
