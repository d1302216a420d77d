import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { FailureMemory } from '../../src/loop/failure-memory.js';
import { runWithLimit } from '../../src/concurrency/run-with-limit.js';

describe('runWithLimit', () => {
  it('keeps input order in the results whatever order the tasks finish in', async () => {
    const results = await runWithLimit({
      items: [40, 5, 20],
      limit: 3,
      task: async (waitMs, index) => {
        await sleep(waitMs);
        return `${index}:${waitMs}`;
      },
    });
    expect(results).toEqual(['0:40', '1:5', '2:20']);
  });

  it('never runs more than the limit at once, and starts items in order', async () => {
    let active = 0;
    let maxActive = 0;
    const started: number[] = [];
    await runWithLimit({
      items: [1, 2, 3, 4, 5],
      limit: 2,
      task: async (item) => {
        started.push(item);
        active += 1;
        maxActive = Math.max(maxActive, active);
        await sleep(20);
        active -= 1;
        return item;
      },
    });
    expect(maxActive).toBe(2);
    expect(started).toEqual([1, 2, 3, 4, 5]);
  });

  it('returns an empty list for no items without calling the task', async () => {
    let calls = 0;
    const results = await runWithLimit({
      items: [],
      limit: 4,
      task: () => {
        calls += 1;
        return Promise.resolve(0);
      },
    });
    expect(results).toEqual([]);
    expect(calls).toBe(0);
  });
});

describe('FailureMemory', () => {
  it('counts a failure again only for the same tool, arguments and message', () => {
    const memory = new FailureMemory();
    expect(memory.record({ identity: 'read', rawArguments: '{"p":1}', message: 'gone' })).toBe(1);
    expect(memory.record({ identity: 'read', rawArguments: '{"p":1}', message: 'gone' })).toBe(2);
    expect(memory.record({ identity: 'read', rawArguments: '{"p":2}', message: 'gone' })).toBe(1);
    expect(memory.record({ identity: 'read', rawArguments: '{"p":1}', message: 'locked' })).toBe(1);
    expect(memory.record({ identity: 'mail.read', rawArguments: '{"p":1}', message: 'gone' })).toBe(1);
  });

  it('keeps separate turns apart: each turn has its own memory', () => {
    const first = new FailureMemory();
    first.record({ identity: 'read', rawArguments: '{}', message: 'x' });
    expect(new FailureMemory().record({ identity: 'read', rawArguments: '{}', message: 'x' })).toBe(1);
  });
});

