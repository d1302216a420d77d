import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReplayRequest } from '../../src/workflows/script/replay-protocol.js';
import { ScriptRunner } from '../../src/workflows/script/script-runner.js';

const runner = new ScriptRunner({ workers: 2, logger: pino({ level: 'silent' }) });
afterAll(async () => {
  await runner.close();
});

const request = (script: string, overrides: Partial<ReplayRequest> = {}): ReplayRequest => ({
  script,
  argsJson: '{"items":["a","b","c"]}',
  seed: 7,
  nowMs: Date.UTC(2026, 0, 2),
  rounds: [],
  memoryLimitBytes: 16 * 1024 * 1024,
  cpuLimitMs: 1_000,
  ...overrides,
});

const fanOut = `
const found = await Promise.all(args.items.map((item) => agent('look up ' + item, { label: item })));
const summary = await agent('summarise ' + found.join(','), { label: 'summary', schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false } });
return { found, summary };`;

describe('the workflow script runtime', () => {
  it('yields the batch a Promise.all waits for, then the sequential tail once those results are fed', async () => {
    const first = await runner.replay(request(fanOut));
    expect(first.kind).toBe('waiting');
    expect(first.calls.map((call) => [call.seq, call.prompt, call.label, call.schemaJson])).toEqual([
      [1, 'look up a', 'a', null],
      [2, 'look up b', 'b', null],
      [3, 'look up c', 'c', null],
    ]);
    const rounds = [[{ seq: 1, valueJson: '"A"' }, { seq: 2, valueJson: '"B"' }, { seq: 3, valueJson: 'null' }]];
    const second = await runner.replay(request(fanOut, { rounds }));
    expect(second.kind).toBe('waiting');
    expect(second.calls).toHaveLength(4);
    expect(second.calls[3]?.prompt).toBe('summarise A,B,');
    expect(JSON.parse(second.calls[3]?.schemaJson ?? 'null')).toMatchObject({ type: 'object' });
    const done = await runner.replay(request(fanOut, { rounds: [...rounds, [{ seq: 4, valueJson: '{"text":"ok"}' }]] }));
    expect(done).toMatchObject({ kind: 'returned' });
    expect(done.kind === 'returned' && JSON.parse(done.resultJson)).toEqual({ found: ['A', 'B', null], summary: { text: 'ok' } });
  });

  it('seeds Math.random and fixes the clock per run, and offers no timers, I/O or host objects', async () => {
    const script = `return { r: [Math.random(), Math.random()], now: Date.now(), date: new Date().toISOString(), kinds: [typeof setTimeout, typeof setInterval, typeof fetch, typeof require, typeof process, typeof std, typeof os, typeof queueMicrotask] };`;
    const one = await runner.replay(request(script));
    const two = await runner.replay(request(script));
    const other = await runner.replay(request(script, { seed: 8 }));
    if (one.kind !== 'returned' || two.kind !== 'returned' || other.kind !== 'returned') throw new Error(`expected results, got ${one.kind}`);
    const value = JSON.parse(one.resultJson);
    expect(one.resultJson).toBe(two.resultJson);
    expect(JSON.parse(other.resultJson).r).not.toEqual(value.r);
    expect(value.now).toBe(Date.UTC(2026, 0, 2));
    expect(value.date).toBe('2026-01-02T00:00:00.000Z');
    expect(value.kinds).toEqual(Array(8).fill('undefined'));
  });

  it('stops a script that loops forever at its CPU limit, without blocking the event loop meanwhile', async () => {
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    const outcome = await runner.replay(request('for (;;) {}', { cpuLimitMs: 500 }));
    clearInterval(ticker);
    expect(outcome.kind).toBe('out_of_time');
    expect(outcome.kind === 'out_of_time' && outcome.message).toContain('CPU time');
    expect(ticks).toBeGreaterThan(5);
  });

  it('stops a script that allocates without bound at its memory limit', async () => {
    const outcome = await runner.replay(request('const hoard = []; for (;;) hoard.push({ n: hoard.length, next: hoard.at(-1) });', { cpuLimitMs: 10_000, memoryLimitBytes: 4 * 1024 * 1024 }));
    expect(outcome.kind).toBe('out_of_memory');
    expect(outcome.kind === 'out_of_memory' && outcome.message).toBe('the script ran out of memory (4 MiB)');
  });

  it('reports what a throwing script threw, and a syntax error', async () => {
    const thrown = await runner.replay(request('const a = await agent("x"); throw new RangeError("no good: " + a);', { rounds: [[{ seq: 1, valueJson: '"v"' }]] }));
    expect(thrown).toMatchObject({ kind: 'threw', message: 'RangeError: no good: v' });
    const syntax = await runner.replay(request('return (;'));
    expect(syntax.kind).toBe('threw');
    expect(syntax.kind === 'threw' && syntax.message).toMatch(/SyntaxError/);
    const badCall = await runner.replay(request('return agent(42);'));
    expect(badCall).toMatchObject({ kind: 'threw', message: expect.stringContaining('prompt must be a non-empty string') });
  });

  it('says the script is not deterministic when a stored result is for a call the replay never made', async () => {
    const outcome = await runner.replay(request('if (Math.random() < 2) return 1; await agent("never");', { rounds: [[{ seq: 1, valueJson: '"x"' }]] }));
    expect(outcome.kind).toBe('nondeterministic');
    expect(outcome.kind === 'nondeterministic' && outcome.message).toContain('the script is not deterministic');
  });

  it('still works after a worker was replaced', async () => {
    const after = await runner.replay(request('return args.items.length;'));
    expect(after).toMatchObject({ kind: 'returned', resultJson: '3' });
  });
});
