/**
 * A Tavily `/search` answer, shaped after the documented response: `query`, `answer`,
 * `images`, `results[]` (`title`, `url`, `content`, `score`, `raw_content`, and
 * `published_date` for news), `response_time`, `request_id`.
 */
export function tavilyAnswer(results: unknown[] = defaultTavilyResults()): unknown {
  return {
    query: 'bun vs node',
    follow_up_questions: null,
    answer: null,
    images: [],
    results,
    response_time: 1.67,
    request_id: '123e4567-e89b-12d3-a456-426614174111',
  };
}

export function defaultTavilyResults(): unknown[] {
  return [
    {
      url: 'https://example.com/blog/bun-vs-node',
      title: 'Bun vs Node.js: Which JavaScript runtime is faster?',
      content: 'Bun is a drop-in replacement for Node.js. In our benchmarks Bun started four times faster.',
      score: 0.86,
      raw_content: null,
    },
    {
      url: 'https://www.infoworld.com/article/bun-1-0-released.html',
      title: 'Bun 1.0 released',
      content: 'The Bun JavaScript runtime reached 1.0, promising Node.js compatibility.',
      score: 0.71,
      raw_content: null,
      published_date: 'Fri, 08 Sep 2023 14:02:11 GMT',
    },
  ];
}
