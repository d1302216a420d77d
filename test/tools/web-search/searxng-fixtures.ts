/**
 * A SearXNG `format=json` answer, shaped after what `searx/webutils.py:get_json_response`
 * serialises: merged results with `engines`, `positions`, `score`, `parsed_url`, an ISO
 * `publishedDate` or null, plus answers, suggestions and `unresponsive_engines` pairs.
 */
export function searxngAnswer(overrides: { results?: unknown[]; unresponsive_engines?: unknown[] } = {}): unknown {
  return {
    query: 'bun vs node',
    number_of_results: 0,
    results: overrides.results ?? [
      searxngResult({
        url: 'https://bun.sh/docs',
        title: 'Bun — A fast all-in-one JavaScript runtime',
        content: 'Bun is a fast JavaScript all-in-one toolkit. It ships as a single executable called bun.',
        engines: ['duckduckgo', 'google'],
        score: 6,
      }),
      searxngResult({
        url: 'https://betterstack.com/community/guides/scaling-nodejs/nodejs-vs-bun/',
        title: 'Node.js vs Bun: a comparison',
        content: 'In this article we compare Node.js and Bun &amp; look at <span class="highlight">speed</span>, compatibility and tooling.',
        publishedDate: '2024-05-01T00:00:00',
        engines: ['bing'],
        score: 2.5,
      }),
      searxngResult({
        url: 'https://news.ycombinator.com/item?id=37440658',
        title: 'Bun 1.0 | Hacker News',
        content: '',
        publishedDate: '2023-09-08T14:02:11+00:00',
        engines: ['google'],
        score: 1,
      }),
    ],
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: ['bun vs deno', 'bun runtime'],
    unresponsive_engines: overrides.unresponsive_engines ?? [],
  };
}

export function searxngResult(fields: {
  url: string | null;
  title?: string;
  content?: string;
  publishedDate?: string | null;
  engines?: string[];
  score?: number;
}): Record<string, unknown> {
  const parsed = fields.url === null ? null : new URL(fields.url);
  return {
    url: fields.url,
    title: fields.title ?? '',
    content: fields.content ?? '',
    thumbnail: '',
    engine: fields.engines?.[0] ?? 'duckduckgo',
    template: 'default.html',
    parsed_url: parsed === null ? null : [parsed.protocol.replace(':', ''), parsed.host, parsed.pathname, '', parsed.search.slice(1), ''],
    img_src: '',
    priority: '',
    engines: fields.engines ?? ['duckduckgo'],
    positions: [1],
    score: fields.score ?? 1,
    category: 'general',
    publishedDate: fields.publishedDate ?? null,
    pubdate: '',
  };
}
