/**
 * A Brave Web Search answer, shaped after the documented `WebSearchApiResponse`: `type`,
 * `query`, `mixed`, and `web.results[]` of `search_result`s with `title`, `url`,
 * `description` (highlights in `<strong>`), `page_age`, `age`, `meta_url`, `profile` …
 */
export function braveAnswer(results: unknown[] = defaultBraveResults()): unknown {
  return {
    type: 'search',
    query: {
      original: 'bun vs node',
      show_strict_warning: false,
      is_navigational: false,
      is_news_breaking: false,
      spellcheck_off: true,
      country: 'us',
      bad_results: false,
      should_fallback: false,
      postal_code: '',
      city: '',
      header_country: '',
      more_results_available: true,
      state: '',
    },
    mixed: { type: 'mixed', main: results.map((_, index) => ({ type: 'web', index, all: false })), top: [], side: [] },
    web: { type: 'search', results, family_friendly: true },
  };
}

export function braveResult(fields: { title: string; url: string; description?: string; page_age?: string; age?: string }): Record<string, unknown> {
  const url = new URL(fields.url);
  return {
    title: fields.title,
    url: fields.url,
    is_source_local: false,
    is_source_both: false,
    description: fields.description ?? '',
    ...(fields.page_age === undefined ? {} : { page_age: fields.page_age }),
    profile: { name: url.hostname, url: fields.url, long_name: url.hostname, img: 'https://imgs.search.brave.com/icon.png' },
    language: 'en',
    family_friendly: true,
    type: 'search_result',
    subtype: 'generic',
    is_live: false,
    meta_url: {
      scheme: 'https',
      netloc: url.hostname,
      hostname: url.hostname,
      favicon: 'https://imgs.search.brave.com/favicon.png',
      path: url.pathname.split('/').filter(Boolean).map((part) => `› ${part}`).join(' '),
    },
    ...(fields.age === undefined ? {} : { age: fields.age }),
  };
}

export function defaultBraveResults(): unknown[] {
  return [
    braveResult({
      title: 'Bun vs Node.js: Which JavaScript runtime is faster?',
      url: 'https://example.com/blog/bun-vs-node',
      description: '<strong>Bun</strong> is a drop-in replacement for <strong>Node</strong>.js &amp; starts 4&#215; faster.',
      page_age: '2024-05-01T10:12:00',
      age: 'May 1, 2024',
    }),
    braveResult({
      title: 'Bun — A fast all-in-one JavaScript runtime',
      url: 'https://bun.sh/',
      description: 'Develop, test, run, and bundle JavaScript &amp; TypeScript projects—all with <strong>Bun</strong>.',
    }),
    braveResult({
      title: 'Is Bun ready for production? : r/node',
      url: 'https://www.reddit.com/r/node/comments/16cb2x1/is_bun_ready_for_production/',
      description: 'A thread about running <strong>Bun</strong> in production.',
      age: '3 days ago',
    }),
  ];
}

/** Brave's documented error body, e.g. for `RATE_LIMITED`. */
export function braveError(status: number, code: string, detail: string): unknown {
  return {
    type: 'ErrorResponse',
    error: { id: '5d832250-9396-4f6e-b84a-2a1fe524cd7d', status, code, detail, meta: { component: 'rate_limiter' } },
    time: 1663072993,
  };
}
