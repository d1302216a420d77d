import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../net/loopback-server.js';
import { launchChromium } from '../support/headless-chromium.js';
import { openStream } from '../support/sse-client.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { runJsonTurn } from '../support/turn-waits.js';

interface BarBox {
  kind: string;
  status: string;
  lane: string;
  callId: string | undefined;
  text: string;
  left: number;
  right: number;
  top: number;
}

// Browser-side code is written as text: this project's TypeScript has no DOM library.
async function barsOf(page: Page): Promise<BarBox[]> {
  return page.evaluate<BarBox[]>(`[...document.querySelectorAll('#timeline .bar')].map((node) => {
    const box = node.getBoundingClientRect();
    return { kind: node.dataset.kind, status: node.dataset.status, lane: node.dataset.lane, callId: node.dataset.callId, text: node.textContent, left: box.left, right: box.right, top: box.top };
  })`);
}

interface Box {
  kind: 'tick' | 'label' | 'bar';
  text: string;
  /** The bar a label names, or the bar itself: its index among the timeline's bars. */
  bar: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  /** A label cut short (`text-overflow: ellipsis`) is wider inside than shown. */
  clipped: boolean;
}

// Every tick label, bar label and bar of the timeline, as drawn.
async function timelineBoxes(page: Page): Promise<{ timeline: { left: number; right: number }; boxes: Box[] }> {
  return page.evaluate(`(() => {
    const box = (node, kind, bar) => {
      const rect = node.getBoundingClientRect();
      const label = node.querySelector('.bar-label');
      return { kind, text: node.textContent, bar, left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom, clipped: label !== null && label.scrollWidth > label.clientWidth + 1 };
    };
    const bars = [...document.querySelectorAll('#timeline .bar')];
    const rect = document.querySelector('#timeline').getBoundingClientRect();
    return {
      timeline: { left: rect.left, right: rect.right },
      boxes: [
        ...[...document.querySelectorAll('#timeline .tick')].map((node) => box(node, 'tick', -1)),
        ...bars.map((node, index) => box(node.querySelector('.bar-inner'), 'label', index)),
        ...bars.map((node, index) => box(node, 'bar', index)),
      ],
    };
  })()`);
}

const overlap = (a: Box, b: Box): boolean => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe('the turn inspector in a real headless Chromium', () => {
  let browser: Browser;
  let site: LoopbackServer;
  let runtime: TestRuntime;
  beforeAll(async () => {
    // Pages that take a while, so two fetches in parallel overlap visibly.
    site = await startLoopbackServer((_request, response) => {
      setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('slow page'), 400);
    });
    runtime = await startTestRuntime({ env: { WEB_FETCH_ALLOW_HOSTS: site.host } });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await runtime.close();
    await site.close();
  });

  it("draws a finished turn's model and tool calls as bars, parallel calls in parallel lanes that overlap, and a failed call", async () => {
    const turn = await runJsonTurn(runtime, {
      agent: { id: 'inspect-me', tools: { computer: true, web: true } },
      input: 'fetch two pages',
      model: {
        script: [
          {
            text: 'Fetching both.',
            calls: [
              { name: 'web_fetch', callId: 'fetch-a', arguments: { urls: [site.url('/a')] } },
              { name: 'web_fetch', callId: 'fetch-b', arguments: { urls: [site.url('/b')] } },
              { name: 'read_file', callId: 'read-missing', arguments: { path: 'missing.txt' } },
            ],
          },
          { calls: [{ name: 'read_file', callId: 'read-repaired', arguments: '{"path": "missing-too.txt"' }] },
          { text: 'Both fetched.' },
        ],
      },
    });
    expect(turn.json.status).toBe('completed');
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(error.message));
      await page.goto(`${runtime.baseUrl}/ui/turns/${String(turn.json.id)}`);
      await page.waitForSelector('#timeline[data-turn-status="completed"]');
      const bars = await barsOf(page);
      expect(bars.filter((bar) => bar.kind === 'model').map((bar) => bar.lane)).toEqual(['0', '0', '0']);
      const a = bars.find((bar) => bar.callId === 'fetch-a');
      const b = bars.find((bar) => bar.callId === 'fetch-b');
      if (a === undefined || b === undefined) throw new Error('no bars for the parallel fetches');
      // Parallel calls: separate lanes (one above the other) and overlapping in time on screen.
      expect(a.lane).not.toBe(b.lane);
      expect(a.top).not.toBe(b.top);
      expect(a.left).toBeLessThan(b.right);
      expect(b.left).toBeLessThan(a.right);
      expect(a.right - a.left).toBeGreaterThan(50);
      // The model call after the batch starts where the slowest fetch ended: to its right.
      const models = bars.filter((bar) => bar.kind === 'model');
      expect(models[1]?.left ?? 0).toBeGreaterThanOrEqual(Math.max(a.right, b.right) - 2);
      const failed = bars.find((bar) => bar.callId === 'read-missing');
      expect(failed).toMatchObject({ status: 'failed', kind: 'tool' });
      expect(failed?.text).toContain('tool_error');
      expect(await page.evaluate<string>(`getComputedStyle(document.querySelector('[data-call-id="read-missing"]')).backgroundColor`)).toBe('rgb(209, 69, 59)');
      expect(bars.find((bar) => bar.callId === 'read-repaired')?.text).toContain('repaired: closed_containers');
      // The exact provider tools, and the raw events.
      expect(await page.textContent('#tools')).toContain('web_fetch');
      expect(await page.textContent('#tools [data-iteration="1"] pre')).toContain('"name": "read_file"');
      expect(Number(await page.textContent('#event-count'))).toBeGreaterThan(8);
      expect(await page.textContent('#events')).toContain('"type":"turn.completed"');
      expect(failures).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('keeps every label of a turn lasting a few milliseconds apart, at any width: bar labels, tick labels and the bars', async () => {
    // Quick calls over three iterations: the bars end up a few pixels apart, too close for the
    // labels beside them, and the axis spans a few milliseconds.
    const turn = await runJsonTurn(runtime, {
      agent: { id: 'inspect-quick', tools: { computer: true, todo: true } },
      input: 'x',
      model: {
        script: [
          { text: 'a', calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'hi' } }, { name: 'list_files', arguments: {} }] },
          { calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }, { name: 'list_files', arguments: {} }] },
          { calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
          { text: 'done' },
        ],
      },
    });
    expect(turn.json.status).toBe('completed');
    for (const width of [1280, 800, 480]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        const failures: string[] = [];
        page.on('pageerror', (error) => failures.push(error.message));
        await page.goto(`${runtime.baseUrl}/ui/turns/${String(turn.json.id)}`);
        await page.waitForSelector('#timeline[data-turn-status="completed"]');
        // The summary and tools arrive after the timeline; let a scroll bar they bring re-place it.
        await page.waitForSelector('#tools details');
        await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
        const { timeline, boxes } = await timelineBoxes(page);
        const labels = boxes.filter((box) => box.kind !== 'bar');
        const bars = boxes.filter((box) => box.kind === 'bar');
        expect(bars).toHaveLength(4 + 5);
        expect(labels.filter((box) => box.kind === 'label').map((box) => box.text)).toEqual(bars.map((box) => box.text));
        for (const [index, a] of labels.entries()) {
          expect(a.clipped, `${width} px: "${a.text}" is cut short`).toBe(false);
          for (const b of labels.slice(index + 1)) expect(overlap(a, b), `${width} px: "${a.text}" overlaps "${b.text}"`).toBe(false);
          // A label may sit on its own bar only.
          for (const bar of bars) if (bar.bar !== a.bar) expect(overlap(a, bar), `${width} px: "${a.text}" covers the bar of "${bar.text}"`).toBe(false);
        }
        // Readable ticks: at least a start and one more, all inside the timeline.
        const ticks = labels.filter((box) => box.kind === 'tick');
        expect(ticks.length, `${width} px`).toBeGreaterThanOrEqual(2);
        expect(ticks[0]?.text).toBe('0 ms');
        for (const tick of ticks) {
          expect(tick.left, `${width} px: tick ${tick.text}`).toBeGreaterThanOrEqual(timeline.left);
          expect(tick.right, `${width} px: tick ${tick.text}`).toBeLessThanOrEqual(timeline.right);
        }
        expect(failures).toEqual([]);
      } finally {
        await page.close();
      }
    }
  }, 60_000);

  it('follows a live turn to its end without a reload', async () => {
    // The first model call takes 5 s: the page is open while the turn runs, however slowly a
    // loaded machine opens it.
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: {
        agent: { id: 'inspect-live', tools: { computer: true } },
        input: 'slowly',
        model: { script: [{ delayMs: 5_000, calls: [{ name: 'list_files', arguments: {} }] }, { text: 'done', delayMs: 500 }] },
      },
    });
    const turnId = String(stream.response.headers['turn-id']);
    const page = await browser.newPage();
    try {
      await page.goto(`${runtime.baseUrl}/ui/turns/${turnId}`);
      await page.waitForSelector('#timeline[data-turn-status="running"] .bar-model.bar-running');
      await page.waitForSelector('#timeline[data-turn-status="completed"]');
      const bars = await barsOf(page);
      expect(bars.map((bar) => [bar.kind, bar.status])).toEqual([
        ['model', 'completed'],
        ['model', 'completed'],
        ['tool', 'completed'],
      ]);
      expect(await page.textContent('#summary')).toContain('completed');
      await stream.ended;
    } finally {
      await page.close();
    }
  }, 60_000);

  it('shows a cancelled turn with its reason', async () => {
    const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'inspect-cancel' }, input: 'x', model: { script: [{ text: 'late', delayMs: 30_000 }] } } });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    const page = await browser.newPage();
    try {
      await page.goto(`${runtime.baseUrl}/ui/turns/${turnId}`);
      await page.waitForSelector('#timeline[data-turn-status="cancelled"]');
      expect(await page.textContent('#timeline .end-marker')).toBe('cancelled: cancel_requested');
      expect((await barsOf(page)).map((bar) => bar.status)).toEqual(['cancelled']);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('lists recent turns, filtered by agent and status', async () => {
    await runJsonTurn(runtime, { agent: { id: 'list-other' }, input: 'x', model: { script: [{ text: 'ok' }] } });
    const page = await browser.newPage();
    try {
      await page.goto(`${runtime.baseUrl}/ui`);
      await page.waitForSelector('#turns tbody tr');
      const agents = await page.evaluate<string[]>(`[...document.querySelectorAll('#turns tbody tr td:nth-child(2)')].map((cell) => cell.textContent)`);
      expect(new Set(agents)).toEqual(new Set(['inspect-me', 'inspect-quick', 'inspect-live', 'inspect-cancel', 'list-other']));
      await page.fill('input[name="agentId"]', 'inspect-me');
      await page.click('button[type="submit"]');
      await page.waitForSelector('#turns tbody tr:not([data-agent-id="inspect-me"])', { state: 'detached' });
      expect(await page.evaluate<number>(`document.querySelectorAll('#turns tbody tr').length`)).toBe(1);
      await page.fill('input[name="agentId"]', '');
      await page.selectOption('select[name="status"]', 'cancelled');
      await page.click('button[type="submit"]');
      await page.waitForSelector('#turns tbody tr:not([data-status="cancelled"])', { state: 'detached' });
      expect(await page.textContent('#turns tbody tr td:nth-child(2)')).toBe('inspect-cancel');
      expect(page.url()).toContain('status=cancelled');
      await page.click('#turns tbody tr a');
      await page.waitForSelector('#timeline[data-turn-status="cancelled"]');
    } finally {
      await page.close();
    }
  }, 60_000);

  it('shows how far each cancelled call got: a command whose processes are gone, one that never started', async () => {
    const command = { name: 'run_command', arguments: { command: 'touch running; sleep 30' } };
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'inspect-outcome', tools: { computer: true } }, input: 'x', model: { script: [{ calls: [command, command] }, { text: 'never' }] } },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'tool.started');
    // Cancelled once the first command runs (it marks the home): before, it would not have started either.
    const marker = path.join(runtime.dataDir, 'agents', 'inspect-outcome', 'home', 'running');
    for (let waited = 0; !existsSync(marker); waited += 20) {
      if (waited > 30_000) throw new Error('the command never ran');
      await sleep(20);
    }
    await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    const page = await browser.newPage();
    try {
      await page.goto(`${runtime.baseUrl}/ui/turns/${turnId}`);
      await page.waitForSelector('#timeline[data-turn-status="cancelled"]');
      const outcomes = await page.evaluate<string[][]>(`[...document.querySelectorAll('#timeline .badge.outcome')].map((badge) => [badge.dataset.outcome, badge.textContent])`);
      expect(outcomes).toEqual([
        ['cancelled', 'stopped, processes gone'],
        ['not_started', 'not started'],
      ]);
    } finally {
      await page.close();
    }
  }, 60_000);
});

describe('the turn inspector with an API token', () => {
  it('asks for the token, then shows the turns', async () => {
    const token = 'inspector-token-0123456789';
    const runtime = await startTestRuntime({ env: { API_TOKEN: token } });
    const browser = await launchChromium();
    try {
      await runJsonTurn({ baseUrl: runtime.baseUrl, token }, { agent: { id: 'secret-agent' }, input: 'x', model: { script: [{ text: 'ok' }] } });
      const page = await browser.newPage();
      await page.goto(`${runtime.baseUrl}/ui`);
      await page.waitForSelector('.token-form');
      await page.fill('.token-form input', token);
      await page.click('.token-form button');
      await page.waitForSelector('#turns tbody tr[data-status="completed"]');
      expect(await page.textContent('#turns tbody')).toContain('secret-agent');
    } finally {
      await browser.close();
      await runtime.close();
    }
  }, 60_000);
});
