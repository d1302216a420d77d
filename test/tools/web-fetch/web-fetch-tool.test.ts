import { readFile, readdir, stat, symlink, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resultText, type AgentToolResult } from '../../../src/tools/tool-result.js';
import { createWebFetchTool, type CreateWebFetchToolOptions } from '../../../src/tools/web/fetch/create-web-fetch-tool.js';
import { WebFetchCache } from '../../../src/tools/web/fetch/web-fetch-cache.js';
import { startLoopbackServer, tableLookup, type LoopbackServer } from '../../net/loopback-server.js';
import { articleHtml, fakeClock, temporaryHome, toolContext, webSettings } from './fixtures.js';

const JSON_BODY = '{"id":12345678901234567890,"name":"widget","tags":["a","b"],"empty":{}}';

let server: LoopbackServer;
let home: string;
let removeHome: () => Promise<void>;
let clock: ReturnType<typeof fakeClock>;
let hits: Record<string, number>;

beforeEach(async () => {
  hits = {};
  server = await startLoopbackServer((request, response) => {
    const url = request.url ?? '/';
    hits[url] = (hits[url] ?? 0) + 1;
    switch (url) {
      case '/article':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(articleHtml({ title: 'Owls of the North', paragraphs: 6 }));
        return;
      case '/long':
        response.writeHead(200, { 'content-type': 'text/html' }).end(articleHtml({ title: 'A Very Long Read', paragraphs: 120 }));
        return;
      case '/no-article':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Tiny</title></head><body><div><a href="/x">Only a link</a></div></body></html>');
        return;
      case '/data.json':
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON_BODY);
        return;
      case '/notes.txt':
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('line one\n  indented <b>not html</b>\n');
        return;
      case '/report.pdf':
        response.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3000, 7)]));
        return;
      case '/huge.txt':
        response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(300 * 1024));
        return;
      case '/bomb':
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(16 * 1024 * 1024, 'z')));
        return;
      case '/moved':
        response.writeHead(301, { location: '/article' }).end();
        return;
      case '/hang':
        return;
      default:
        response.writeHead(404).end('missing');
    }
  });
  ({ home, remove: removeHome } = await temporaryHome());
  clock = fakeClock();
});

afterEach(async () => {
  await server.close();
  await removeHome();
});

function tool(overrides: Partial<CreateWebFetchToolOptions> = {}) {
  return createWebFetchTool({
    agentId: 'agent_1',
    home,
    settings: webSettings({ allowHosts: [server.host] }),
    cache: new WebFetchCache({ clock }),
    clock,
    ...overrides,
  });
}

async function failureOf(promise: Promise<AgentToolResult>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('web_fetch definition', () => {
  it('is a read-only parallel tool named web_fetch', () => {
    const webFetch = tool();
    expect(webFetch.name).toBe('web_fetch');
    expect(webFetch).toMatchObject({ executionMode: 'parallel', isReadOnly: true, isDestructive: false });
  });

  it.each([
    [{ urls: [] }],
    [{ urls: ['https://a.example/', 'https://b.example/', 'https://c.example/', 'https://d.example/', 'https://e.example/', 'https://f.example/'] }],
    [{ urls: ['file:///etc/passwd'] }],
    [{ urls: ['ftp://example.com/'] }],
    [{ urls: ['not a url'] }],
    [{ url: 'https://example.com/' }],
  ])('rejects the arguments %j before running', (value) => {
    expect(tool().checkArguments(value).ok).toBe(false);
  });

  it('labels its activity from the URLs', () => {
    const webFetch = tool();
    expect(webFetch.describeActivity({ urls: ['https://example.com/page'] })).toBe('Fetching example.com/page');
    expect(webFetch.describeActivity({ urls: ['https://example.com/', 'https://example.org/a', 'https://example.net/b'] })).toBe('Fetching 3 pages');
  });
});

describe('web_fetch content', () => {
  it('turns an HTML article into Markdown with its title, headings and absolute links', async () => {
    const webFetch = tool();
    const params = { urls: [server.url('/article')] };
    const result = await webFetch.execute(params, toolContext());
    const text = resultText(result.content);
    expect(text).toContain('Title: Owls of the North');
    expect(text).toContain('## Background');
    expect(text).toContain('## Conclusion');
    expect(text).toContain(`[relative guide](${server.url('/docs/guide')})`);
    expect(text).toContain('[external reference](https://other.example/ref)');
    expect(text).toContain('const answer = 42;');
    expect(text).not.toContain('SECRET_SCRIPT');
    expect(text).not.toContain('javascript:');
    expect(text).not.toContain('<p>');
    expect(webFetch.describeCompletedActivity?.(params, result)).toMatch(/^Fetched 127\.0\.0\.1:\d+\/article \(\d+(\.\d)? KB\)$/);
  });

  it('falls back to the whole body when Readability finds no article', async () => {
    const result = await tool().execute({ urls: [server.url('/no-article')] }, toolContext());
    const text = resultText(result.content);
    expect(text).toContain('Title: Tiny');
    expect(text).toContain(`[Only a link](${server.url('/x')})`);
  });

  it('reports the final URL after a redirect', async () => {
    const result = await tool().execute({ urls: [server.url('/moved')] }, toolContext());
    expect(resultText(result.content)).toContain(`Final URL: ${server.url('/article')}`);
  });

  it('pretty-prints JSON without rounding large numbers', async () => {
    const result = await tool().execute({ urls: [server.url('/data.json')] }, toolContext());
    const text = resultText(result.content);
    expect(text).toContain('{\n  "id": 12345678901234567890,\n  "name": "widget",\n  "tags": [\n    "a",\n    "b"\n  ],\n  "empty": {}\n}');
  });

  it('returns plain text as it is', async () => {
    const result = await tool().execute({ urls: [server.url('/notes.txt')] }, toolContext());
    expect(resultText(result.content)).toContain('line one\n  indented <b>not html</b>\n');
  });

  it('describes a binary type instead of dumping it', async () => {
    const result = await tool().execute({ urls: [server.url('/report.pdf')] }, toolContext());
    const text = resultText(result.content);
    expect(text).toMatch(/application\/pdf content \(2\.9 KB\)/);
    expect(text).not.toContain('%PDF');
  });
});

describe('web_fetch long pages', () => {
  it('shows the start of a long page and saves the full Markdown in the home', async () => {
    const webFetch = tool({ settings: webSettings({ allowHosts: [server.host], outputChars: 2_000 }) });
    const result = await webFetch.execute({ urls: [server.url('/long')] }, toolContext());
    const text = resultText(result.content);
    const saved = /saved in the agent home as (\.web\/[a-z0-9.-]+\.md)\./.exec(text)?.[1];
    expect(saved).toBeDefined();
    expect(saved).toMatch(/^\.web\/127\.0\.0\.1-\d+-long-[0-9a-f]{10}\.md$/);
    expect(text).toContain(`call read_file with path "${saved}" and offset`);
    expect(text.length).toBeLessThan(2_600);

    const full = await readFile(path.join(home, saved!), 'utf8');
    expect(full).toContain('Paragraph 120 of the story.');
    expect(full).toContain('## Conclusion');
    const shown = text.slice(text.indexOf('\n\n') + 2, text.lastIndexOf('\n\n['));
    expect(full.startsWith(shown)).toBe(true);
    // The offset named in the note is the first line the excerpt left out.
    const offset = Number(/and offset (\d+)/.exec(text)?.[1]);
    expect(shown.trimEnd()).toBe(full.split('\n').slice(0, offset - 1).join('\n').trimEnd());
    expect(result.details).toMatchObject({ pages: [{ savedTo: saved, characters: full.length }] });
  });

  it('writes no file when the page fits', async () => {
    await tool().execute({ urls: [server.url('/article')] }, toolContext());
    await expect(readdir(path.join(home, '.web'))).rejects.toThrow();
  });

  it('saves nothing outside the home when .web is a link leading out of it', async () => {
    const outside = await temporaryHome();
    try {
      await symlink(outside.home, path.join(home, '.web'));
      const webFetch = tool({ settings: webSettings({ allowHosts: [server.host], outputChars: 2_000 }) });
      const result = await webFetch.execute({ urls: [server.url('/long')] }, toolContext());
      expect(resultText(result.content)).toMatch(/The rest could not be saved in the agent home \(.*outside the agent home/);
      expect(await readdir(outside.home)).toEqual([]);
    } finally {
      await outside.remove();
    }
  });

  it('gives the saved page and the .web folder it creates to the owner, as the file tools do', async () => {
    const owner = { uid: 4321, gid: 4322 };
    const webFetch = tool({ owner, settings: webSettings({ allowHosts: [server.host], outputChars: 2_000 }) });
    const result = await webFetch.execute({ urls: [server.url('/long')] }, toolContext());
    const saved = /saved in the agent home as (\.web\/[a-z0-9.-]+\.md)\./.exec(resultText(result.content))?.[1] ?? 'not saved';
    for (const entry of ['.web', saved]) expect(await stat(path.join(home, entry))).toMatchObject({ uid: owner.uid, gid: owner.gid });
  });

  it('saves the same page under the same name when fetched twice at once', async () => {
    await mkdir(path.join(home, '.web'));
    const settings = webSettings({ allowHosts: [server.host], outputChars: 2_000 });
    const first = tool({ settings });
    const second = tool({ settings });
    await Promise.all([first.execute({ urls: [server.url('/long')] }, toolContext()), second.execute({ urls: [server.url('/long')] }, toolContext())]);
    const files = await readdir(path.join(home, '.web'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.md$/);
  });
});

describe('web_fetch cache', () => {
  it('answers a repeat fetch within 15 minutes from the cache, without the network', async () => {
    const webFetch = tool();
    const params = { urls: [server.url('/article')] };
    await webFetch.execute(params, toolContext());
    clock.advance(14 * 60 * 1000);
    const again = await webFetch.execute(params, toolContext());
    expect(hits['/article']).toBe(1);
    expect(resultText(again.content)).toMatch(/from the cache \(fetched 14 min ago\)/);
    expect(again.details).toMatchObject({ cached: 1, pages: [{ cached: true }] });
    expect(webFetch.describeCompletedActivity?.(params, again)).toMatch(/^Fetched 127\.0\.0\.1:\d+\/article \(.+ KB, cached\)$/);
  });

  it('fetches again once 15 minutes have passed', async () => {
    const webFetch = tool();
    const params = { urls: [server.url('/article')] };
    await webFetch.execute(params, toolContext());
    clock.advance(15 * 60 * 1000);
    const again = await webFetch.execute(params, toolContext());
    expect(hits['/article']).toBe(2);
    expect(resultText(again.content)).not.toContain('from the cache');
  });

  it('fetches a URL given twice in one call once', async () => {
    await tool().execute({ urls: [server.url('/notes.txt'), server.url('/notes.txt')] }, toolContext());
    expect(hits['/notes.txt']).toBe(1);
  });
});

describe('web_fetch limits and failures', () => {
  it('cuts a body over the byte cap and says so', async () => {
    const webFetch = tool({ settings: webSettings({ allowHosts: [server.host], fetchMaxBytes: 64 * 1024 }) });
    const result = await webFetch.execute({ urls: [server.url('/huge.txt')] }, toolContext());
    expect(resultText(result.content)).toContain('Note: the response was cut at 64 KB, the size limit; the text below is incomplete.');
    expect(result.details).toMatchObject({ pages: [{ truncated: true, bytes: 64 * 1024 }] });
  });

  it('caps a gzip bomb on its decoded size', async () => {
    const webFetch = tool({ settings: webSettings({ allowHosts: [server.host], fetchMaxBytes: 128 * 1024 }) });
    const result = await webFetch.execute({ urls: [server.url('/bomb')] }, toolContext());
    expect(result.details).toMatchObject({ pages: [{ truncated: true, bytes: 128 * 1024 }] });
  });

  it('times out a server that never answers', async () => {
    const webFetch = tool({ settings: webSettings({ allowHosts: [server.host], fetchTimeoutMs: 150 }) });
    const error = await failureOf(webFetch.execute({ urls: [server.url('/hang')] }, toolContext()));
    expect(error.message).toMatch(/^Could not fetch .*\/hang: no complete response within 150 ms$/);
  });

  it('stops a hanging fetch as soon as the turn is cancelled', async () => {
    const controller = new AbortController();
    const webFetch = tool({ settings: webSettings({ allowHosts: [server.host], fetchTimeoutMs: 60_000 }) });
    const pending = webFetch.execute({ urls: [server.url('/hang'), server.url('/hang')] }, toolContext(controller.signal));
    while ((hits['/hang'] ?? 0) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await failureOf(pending);
    expect(error.message).toMatch(/cancelled/);
  });

  it('reports a failing URL in place and still returns the others', async () => {
    const webFetch = tool();
    const params = { urls: [server.url('/notes.txt'), 'http://10.0.0.1/', server.url('/missing')] };
    const result = await webFetch.execute(params, toolContext());
    const text = resultText(result.content);
    expect(text).toContain('line one');
    expect(text).toMatch(/\[2\/3\] http:\/\/10\.0\.0\.1\/\nFailed: refused 10\.0\.0\.1: 10\.0\.0\.1 is a private/);
    expect(text).toMatch(/\[3\/3\] .*\/missing\nFailed: the server answered HTTP 404 Not Found/);
    expect(result.details).toMatchObject({ fetched: 1, failed: 2 });
    expect(webFetch.describeCompletedActivity?.(params, result)).toBe('Fetched 3 pages (2 failed)');
  });

  it('throws, listing every reason, when all URLs fail', async () => {
    const error = await failureOf(tool().execute({ urls: ['http://169.254.169.254/latest/meta-data/', server.url('/missing')] }, toolContext()));
    expect(error.message).toMatch(/^Could not fetch any of the 2 URLs:\n- http:\/\/169\.254\.169\.254\/latest\/meta-data\/: refused .*link-local/);
    expect(error.message).toMatch(/\/missing: the server answered HTTP 404/);
  });
});

describe('web_fetch refuses internal targets', () => {
  let internal: LoopbackServer;

  beforeEach(async () => {
    internal = await startLoopbackServer();
  });

  afterEach(async () => {
    await internal.close();
  });

  it.each([
    (port: number) => `http://127.0.0.1:${port}/`,
    (port: number) => `http://localhost:${port}/`,
    (port: number) => `http://intranet.test:${port}/`,
    (port: number) => `http://[::ffff:127.0.0.1]:${port}/`,
    (port: number) => `http://2130706433:${port}/`,
    (port: number) => `http://0x7f.1:${port}/`,
    (port: number) => `http://0.0.0.0:${port}/`,
  ])('refuses %s without connecting', async (url) => {
    const resolver = tableLookup({ localhost: ['127.0.0.1'], 'intranet.test': ['192.168.7.7'] });
    const webFetch = tool({ lookup: resolver.lookup });
    const error = await failureOf(webFetch.execute({ urls: [url(internal.port)] }, toolContext()));
    expect(error.message).toMatch(/refused .* only public internet addresses can be fetched/);
    expect(internal.connections).toBe(0);
  });
});
