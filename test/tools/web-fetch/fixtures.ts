import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { Clock } from '../../../src/clock.js';
import type { ToolExecutionContext } from '../../../src/tools/define-worker-tool.js';
import type { WebFetchSettings } from '../../../src/tools/web/fetch/web-fetch-settings.js';

/** A clock that only moves when the test moves it. */
export function fakeClock(): Clock & { advance(ms: number): void } {
  let elapsed = 0;
  const start = Date.parse('2026-01-15T09:00:00Z');
  return {
    now: () => new Date(start + elapsed),
    monotonicMs: () => elapsed,
    advance: (ms) => {
      elapsed += ms;
    },
  };
}

export function toolContext(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return { signal, callId: 'call_1', logger: pino({ level: 'silent' }), present: () => undefined, reportStopped: () => undefined };
}

export function webSettings(overrides: Partial<WebFetchSettings> = {}): WebFetchSettings {
  return { allowHosts: [], fetchTimeoutMs: 5_000, fetchMaxBytes: 1024 * 1024, maxRedirects: 3, outputChars: 20_000, ...overrides };
}

export async function temporaryHome(): Promise<{ home: string; remove: () => Promise<void> }> {
  const home = await mkdtemp(path.join(tmpdir(), 'web-fetch-home-'));
  return { home, remove: () => rm(home, { recursive: true, force: true }) };
}

/** An article page long enough for Readability to recognise. */
export function articleHtml(options: { title: string; paragraphs: number }): string {
  const paragraphs = Array.from(
    { length: options.paragraphs },
    (_, index) =>
      `<p>Paragraph ${index + 1} of the story. ${'The quick brown fox jumps over the lazy dog while the reporter takes careful notes. '.repeat(4)}</p>`,
  ).join('\n');
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${options.title}</title><script>window.tracking = "SECRET_SCRIPT";</script><style>.x{color:red}</style></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
<h1>${options.title}</h1>
<p>Read the <a href="/docs/guide">relative guide</a> or the <a href="https://other.example/ref">external reference</a>. <a href="javascript:alert(1)">click me</a></p>
<h2>Background</h2>
${paragraphs}
<h2>Conclusion</h2>
<p>The end of the article. ${'Final words, carefully chosen. '.repeat(5)}</p>
<pre><code>const answer = 42;</code></pre>
</article>
<footer>Copyright footer</footer>
</body></html>`;
}
