import { describe, expect, it } from 'vitest';
import { REPEATED_FAILURE_WARNING } from '../../src/loop/failure-memory.js';
import { prepareToolCall } from '../../src/loop/prepare-tool-call.js';
import { createToolMap } from '../../src/tools/tool-map.js';
import type { TurnEventBody } from '../../src/events/turn-events.js';
import { eventsOf, outputOf, runLoop, tool } from './loop-harness.js';

const HINT = '\nTry a different approach if this keeps failing.';
const echo = tool({ name: 'echo', execute: (params) => Promise.resolve({ content: `echo ${params.id}` }) });

describe('model faults become outputs the model reads, and the turn goes on', () => {
  it('answers a call to an unknown tool, including prototype names, with the tools there are', async () => {
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'delete_everything'];
    const { outcome, requests, events } = await runLoop({
      tools: [echo],
      script: [{ calls: names.map((name) => ({ name, arguments: { id: 'x' } })) }, { text: 'I will use echo instead.' }],
    });
    expect(outcome).toMatchObject({ kind: 'answered', text: 'I will use echo instead.' });
    names.forEach((name, index) => {
      expect(outputOf(requests[1], `call_1_${index + 1}`)).toBe(`Error: there is no tool named "${name}" in this turn. Available tools: echo.${HINT}`);
    });
    expect(eventsOf(events, 'tool.failed').map((event) => event.error.code)).toEqual(names.map(() => 'unknown_tool'));
    expect(eventsOf(events, 'tool.started')).toHaveLength(0);
  });

  it('reaches a tool that is really named "__proto__", and only that one', async () => {
    const proto = tool({ name: '__proto__', execute: () => Promise.resolve({ content: 'proto tool ran' }) });
    const { requests } = await runLoop({
      tools: [proto],
      script: [{ calls: [{ name: '__proto__', arguments: { id: 'x' } }, { name: 'constructor', arguments: { id: 'x' } }] }],
    });
    expect(outputOf(requests[1], 'call_1_1')).toBe('proto tool ran');
    expect(outputOf(requests[1], 'call_1_2')).toMatch(/^Error: there is no tool named "constructor" in this turn\. Available tools: __proto__\./);
  });

  it('answers a call with a namespace it does not have as unknown', async () => {
    const { requests } = await runLoop({ tools: [echo], script: [{ calls: [{ name: 'echo', namespace: 'mail', arguments: { id: 'x' } }] }] });
    expect(outputOf(requests[1], 'call_1_1')).toMatch(/^Error: there is no tool named "mail\.echo" in this turn/);
  });

  it('answers invalid arguments with the problem and a hint, without running the tool', async () => {
    let ran = false;
    const strictEcho = tool({
      name: 'echo',
      execute: () => {
        ran = true;
        return Promise.resolve({ content: 'ran' });
      },
    });
    const { requests, events, outcome } = await runLoop({
      tools: [strictEcho],
      script: [{ calls: [{ name: 'echo', arguments: { id: 5 } }, { name: 'echo', arguments: '{"id":"unfinish' }] }, { text: 'ok' }],
    });
    expect(ran).toBe(false);
    expect(outcome.kind).toBe('answered');
    expect(outputOf(requests[1], 'call_1_1')).toBe(`Error: invalid arguments for echo: id: expected string, received number${HINT}`);
    expect(outputOf(requests[1], 'call_1_2')).toBe(
      `Error: invalid arguments for echo: the arguments were cut off inside a string; send the complete JSON object again${HINT}`,
    );
    expect(eventsOf(events, 'tool.failed').map((event) => [event.error.code, event.repair])).toEqual([
      ['invalid_arguments', 'none'],
      ['invalid_arguments', undefined],
    ]);
  });

  it('answers a thrown error with its message and a hint, and goes on with the next call', async () => {
    const locked = tool({ name: 'locked', execute: () => Promise.reject(new Error('notes.md is locked by another process')) });
    const { requests, events } = await runLoop({
      tools: [locked, echo],
      script: [{ calls: [{ name: 'locked', arguments: { id: 'a' } }, { name: 'echo', arguments: { id: 'b' } }] }],
    });
    expect(outputOf(requests[1], 'call_1_1')).toBe(`Error: notes.md is locked by another process${HINT}`);
    expect(outputOf(requests[1], 'call_1_2')).toBe('echo b');
    expect(eventsOf(events, 'tool.failed')[0]).toMatchObject({ error: { code: 'tool_error', message: 'notes.md is locked by another process' }, label: 'Using locked' });
  });

  it('catches a tool that throws synchronously, throws a non-Error, or throws an empty message', async () => {
    const sync = tool({
      name: 'sync',
      execute: () => {
        throw new Error('thrown before any await');
      },
    });
    const text = tool({
      name: 'text',
      execute: () => {
        // A hostile tool that rejects with something other than an Error.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        return Promise.reject('a bare string');
      },
    });
    const empty = tool({ name: 'empty', execute: () => Promise.reject(new Error('')) });
    const { requests } = await runLoop({
      tools: [sync, text, empty],
      script: [{ calls: ['sync', 'text', 'empty'].map((name) => ({ name, arguments: { id: 'x' } })) }],
    });
    expect(outputOf(requests[1], 'call_1_1')).toBe(`Error: thrown before any await${HINT}`);
    expect(outputOf(requests[1], 'call_1_2')).toBe(`Error: a bare string${HINT}`);
    expect(outputOf(requests[1], 'call_1_3')).toBe(`Error: empty failed${HINT}`);
  });

  it('warns when the same call fails the same way a second time', async () => {
    const locked = tool({ name: 'locked', execute: () => Promise.reject(new Error('locked')) });
    const { requests } = await runLoop({
      tools: [locked],
      script: [
        { calls: [{ name: 'locked', arguments: { id: 'a' } }] },
        { calls: [{ name: 'locked', arguments: { id: 'a' } }, { name: 'locked', arguments: { id: 'b' } }] },
        { calls: [{ name: 'locked', arguments: { id: 'a' } }] },
      ],
    });
    expect(outputOf(requests[1], 'call_1_1')).toBe(`Error: locked${HINT}`);
    expect(outputOf(requests[2], 'call_2_1')).toBe(`Error: locked\n\n${REPEATED_FAILURE_WARNING}`);
    expect(outputOf(requests[2], 'call_2_2')).toBe(`Error: locked${HINT}`);
    expect(outputOf(requests[3], 'call_3_1')).toBe(`Error: locked\n\n${REPEATED_FAILURE_WARNING}`);
  });

  it('warns on a repeated unknown tool or invalid-arguments call too', async () => {
    const { requests } = await runLoop({
      tools: [echo],
      script: [
        { calls: [{ name: 'nope', arguments: '{}' }, { name: 'echo', arguments: '{}' }] },
        { calls: [{ name: 'nope', arguments: '{}' }, { name: 'echo', arguments: '{}' }] },
      ],
    });
    expect(outputOf(requests[2], 'call_2_1')).toContain(REPEATED_FAILURE_WARNING);
    expect(outputOf(requests[2], 'call_2_2')).toContain(REPEATED_FAILURE_WARNING);
  });

  it('records, per call, tool.started before exactly one of tool.completed or tool.failed', async () => {
    const locked = tool({ name: 'locked', execute: () => Promise.reject(new Error('locked')) });
    const fast = tool({ name: 'fast', executionMode: 'parallel', execute: () => Promise.resolve({ content: 'fast' }) });
    const events: TurnEventBody[] = [];
    await runLoop({
      tools: [echo, locked, fast],
      events,
      script: [
        {
          calls: [
            { name: 'fast', arguments: { id: '1' } },
            { name: 'fast', arguments: { id: '2' } },
            { name: 'missing', arguments: {} },
            { name: 'echo', arguments: { id: 3 } },
            { name: 'locked', arguments: { id: '4' } },
            { name: 'echo', arguments: { id: '5' } },
          ],
        },
      ],
    });
    const byCall = new Map<string, string[]>();
    for (const event of events) {
      if (event.type === 'tool.started' || event.type === 'tool.completed' || event.type === 'tool.failed') {
        byCall.set(event.callId, [...(byCall.get(event.callId) ?? []), event.type]);
      }
    }
    expect(Object.fromEntries(byCall)).toEqual({
      call_1_1: ['tool.started', 'tool.completed'],
      call_1_2: ['tool.started', 'tool.completed'],
      call_1_3: ['tool.failed'],
      call_1_4: ['tool.failed'],
      call_1_5: ['tool.started', 'tool.failed'],
      call_1_6: ['tool.started', 'tool.completed'],
    });
  });
});

describe('prepareToolCall', () => {
  it('lists at most 40 tools and cuts a huge unknown name', () => {
    const tools = Array.from({ length: 45 }, (_, index) => tool({ name: `tool_${index}`, execute: () => Promise.resolve({ content: '' }) }));
    const prepared = prepareToolCall({ call: { callId: 'c', name: 'x'.repeat(5000), arguments: '{}' }, toolMap: createToolMap(tools) });
    expect(prepared.kind).toBe('rejected');
    if (prepared.kind === 'rejected') {
      expect(prepared.message).toContain(`there is no tool named "${'x'.repeat(100)}" in this turn.`);
      expect(prepared.message).not.toContain('x'.repeat(101));
      expect(prepared.message).toMatch(/tool_39, …\.$/);
      expect(prepared.message).not.toContain('tool_40');
    }
  });

  it('says so when a turn has no tools at all', () => {
    const prepared = prepareToolCall({ call: { callId: 'c', name: 'echo', arguments: '{}' }, toolMap: createToolMap([]) });
    expect(prepared).toMatchObject({ kind: 'rejected', code: 'unknown_tool', message: 'there is no tool named "echo" in this turn. This turn has no tools.' });
  });
});
