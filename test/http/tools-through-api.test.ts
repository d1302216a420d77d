import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../net/loopback-server.js';
import { searxngAnswer } from '../tools/web-search/searxng-fixtures.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const ARTICLE = `<!doctype html><html><head><title>Release notes</title></head><body>
<article><h1>Release notes</h1><p>Version 2 adds <a href="/docs">streaming</a> and fixes
the cancel race that lost the last event. It is the release everyone has waited for.</p>
<p>Upgrade with one command and read the migration guide before you do.</p></article></body></html>`;

interface Event {
  readonly type: string;
  readonly [field: string]: any;
}

/** Each tool family once more, but through POST /turns as a backend would drive it. */
describe('tools through the HTTP API', () => {
  let site: LoopbackServer;
  let searxng: LoopbackServer;
  let runtime: TestRuntime;

  beforeAll(async () => {
    site = await startLoopbackServer((_request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(ARTICLE);
    });
    searxng = await startLoopbackServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(searxngAnswer()));
    });
    runtime = await startTestRuntime({
      env: { WEB_FETCH_ALLOW_HOSTS: site.host, WEB_SEARCH_PROVIDER: 'searxng', SEARXNG_URL: searxng.url('/') },
    });
  });
  afterAll(async () => {
    await runtime.close();
    await site.close();
    await searxng.close();
  });

  async function turn(agentTools: Record<string, unknown>, script: unknown[]): Promise<{ body: any; events: Event[] }> {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'tools-agent', tools: agentTools }, input: 'go', model: { script } }),
    });
    const body = await readJson(response);
    return { body, events: body.events as Event[] };
  }

  it('fetches an allowed page as Markdown, and refuses the cloud metadata address as a tool error the model reads', async () => {
    const { body, events } = await turn({ web: true }, [
      { calls: [{ name: 'web_fetch', arguments: { urls: [site.url('/notes')] }, callId: 'page' }] },
      { calls: [{ name: 'web_fetch', arguments: { urls: ['http://169.254.169.254/latest/meta-data/'] }, callId: 'metadata' }] },
      { text: 'read it' },
    ]);
    expect(body.status).toBe('completed');
    const page = events.find((event) => event.type === 'tool.completed' && event['callId'] === 'page');
    expect(page?.['output']).toContain('Title: Release notes');
    expect(page?.['output']).toContain(`[streaming](${site.url('/docs')})`);
    expect(page?.['output']).not.toContain('<p>');
    expect(page?.['label']).toMatch(/^Fetched /);
    const refused = events.find((event) => event.type === 'tool.failed' && event['callId'] === 'metadata');
    expect(refused?.['error'].code).toBe('tool_error');
    expect(refused?.['output']).toMatch(/169\.254\.169\.254/);
  });

  it('searches through the configured provider', async () => {
    const { events } = await turn({ web: true }, [{ calls: [{ name: 'web_search', arguments: { query: 'bun vs node', limit: 3 } }] }, { text: 'ok' }]);
    expect(events[0]?.['tools']).toEqual(['web_fetch', 'web_search']);
    const searched = events.find((event) => event.type === 'tool.completed' && event['name'] === 'web_search');
    expect(searched?.['label']).toMatch(/^Found \d+ results? for 'bun vs node'$/);
    expect(searched?.['output']).toMatch(/^1\. /m);
  });

  it('patches a file and runs a command on it in the sandbox', async () => {
    const patch = ['*** Begin Patch', '*** Add File: greet.sh', '+echo "hello from $(pwd)"', '*** End Patch'].join('\n');
    const { body, events } = await turn({ computer: true }, [
      { calls: [{ name: 'apply_patch', arguments: { patch } }] },
      { calls: [{ name: 'run_command', arguments: { command: 'sh greet.sh' } }] },
      { text: 'done' },
    ]);
    expect(body.status).toBe('completed');
    const patched = events.find((event) => event.type === 'tool.completed' && event['name'] === 'apply_patch');
    expect(patched?.['output']).toContain('greet.sh');
    const ran = events.find((event) => event.type === 'tool.completed' && event['name'] === 'run_command');
    expect(ran?.['output']).toContain('hello from /home/agent');
    expect(ran?.['label']).toMatch(/^Ran `sh greet.sh` \(exit 0, /);
    const home = path.join(runtime.dataDir, 'agents', 'tools-agent', 'home');
    expect(await readFile(path.join(home, 'greet.sh'), 'utf8')).toBe('echo "hello from $(pwd)"\n');
  });

  it('answers model faults as outputs and goes on: unknown tools, bad arguments, the same failure twice', async () => {
    const { body, events } = await turn({ computer: true }, [
      { calls: [{ name: '__proto__', arguments: {}, callId: 'proto' }] },
      { calls: [{ name: 'read_file', arguments: { path: 42 }, callId: 'bad-1' }] },
      { calls: [{ name: 'read_file', arguments: { path: 42 }, callId: 'bad-2' }] },
      { text: 'I gave up on that.' },
    ]);
    expect(body).toMatchObject({ status: 'completed', output: 'I gave up on that.', iterations: 4 });
    const failed = events.filter((event) => event.type === 'tool.failed');
    expect(failed.map((event): unknown[] => [event['callId'], event['error'].code])).toEqual([
      ['proto', 'unknown_tool'],
      ['bad-1', 'invalid_arguments'],
      ['bad-2', 'invalid_arguments'],
    ]);
    expect(failed[0]?.['output']).toMatch(/^Error: there is no tool named "__proto__" in this turn\. Available tools: read_file/);
    expect(failed[1]?.['output']).toContain('path: expected string, received number');
    expect(failed[1]?.['output']).not.toContain('Warning');
    expect(failed[2]?.['output']).toContain('Warning: this exact call has now failed the same way more than once');
  });
});
