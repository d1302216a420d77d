import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { approvalPolicySchema, resolveApprovalMode } from '../../src/turns/approval-policy.js';
import { createApprovalGate } from '../../src/approvals/create-approval-gate.js';
import { hashArguments } from '../../src/approvals/hash-arguments.js';
import { dispatchToolCalls } from '../../src/loop/dispatch-tool-calls.js';
import { createToolMap } from '../../src/tools/tool-map.js';
import { createScriptedModel } from '../../src/models/scripted-model.js';
import { Timeline, eventsOf, timedTool, tool, toolCallRuntime } from '../loop/loop-harness.js';
import type { TurnEventBody } from '../../src/events/turn-events.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('argumentsHash', () => {
  it('hashes the RFC 8785 canonical form: sorted keys, ES number forms, minimal string escapes', () => {
    // The example of RFC 8785 section 3.2.2, and its canonical text from section 3.2.4.
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    const canonical = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
    expect(hashArguments(input).hash).toBe(sha256(canonical));
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 section 3.2.3 does', () => {
    const input = { '\u20ac': 1, '\r': 2, '\ufb33': 3, '1': 4, '\ud83d\ude00': 5, '\u0080': 6, '\u00f6': 7 };
    const canonical = '{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\ud83d\ude00":5,"\ufb33":3}';
    expect(hashArguments(input).hash).toBe(sha256(canonical));
  });

  it('is the hash of what the event shows: properties JSON cannot carry are left out of both', () => {
    const hashed = hashArguments({ path: 'a.txt', note: undefined, nested: { b: 2, a: [1, 'x'] } });
    expect(hashed.value).toEqual({ path: 'a.txt', nested: { b: 2, a: [1, 'x'] } });
    expect(hashed.hash).toBe(sha256('{"nested":{"a":[1,"x"],"b":2},"path":"a.txt"}'));
    expect(hashed.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashArguments({ path: 'a.txt', content: 'A' }).hash).not.toBe(hashArguments({ path: 'a.txt', content: 'B' }).hash);
  });
});

describe('the approval policy', () => {
  const destructive = tool({ name: 'write_file', isDestructive: true, isReadOnly: false, execute: () => Promise.resolve({ content: 'ok' }) });
  const reader = tool({ name: 'read_file', execute: () => Promise.resolve({ content: 'ok' }) });
  const namespaced = tool({ name: 'create_event', namespace: 'calendar', execute: () => Promise.resolve({ content: 'ok' }) });

  it('allows everything by default, asks for destructive tools when told, and a per-tool entry wins', () => {
    expect(resolveApprovalMode({ policy: undefined, tool: destructive })).toBe('allow');
    expect(resolveApprovalMode({ policy: {}, tool: destructive })).toBe('allow');
    expect(resolveApprovalMode({ policy: { destructive: 'ask' }, tool: destructive })).toBe('ask');
    expect(resolveApprovalMode({ policy: { destructive: 'ask' }, tool: reader })).toBe('allow');
    expect(resolveApprovalMode({ policy: { destructive: 'ask', tools: { write_file: 'allow' } }, tool: destructive })).toBe('allow');
    expect(resolveApprovalMode({ policy: { destructive: 'allow', tools: { read_file: 'deny' } }, tool: reader })).toBe('deny');
  });

  it('matches a namespaced tool by namespace.name before its bare name', () => {
    expect(resolveApprovalMode({ policy: { tools: { create_event: 'deny', 'calendar.create_event': 'ask' } }, tool: namespaced })).toBe('ask');
    expect(resolveApprovalMode({ policy: { tools: { create_event: 'deny' } }, tool: namespaced })).toBe('deny');
  });

  it('finds nothing it was not given for names like __proto__ and constructor', () => {
    const policy = approvalPolicySchema.parse(JSON.parse('{"tools":{"__proto__":"deny","toString":"ask"}}'));
    const constructorTool = tool({ name: 'constructor', execute: () => Promise.resolve({ content: 'ok' }) });
    const protoTool = tool({ name: 'valueOf', execute: () => Promise.resolve({ content: 'ok' }) });
    expect(resolveApprovalMode({ policy, tool: constructorTool })).toBe('allow');
    expect(resolveApprovalMode({ policy, tool: protoTool })).toBe('allow');
  });

  it('refuses a policy value it does not know', () => {
    expect(approvalPolicySchema.safeParse({ destructive: 'deny' }).success).toBe(false);
    expect(approvalPolicySchema.safeParse({ tools: { write_file: 'maybe' } }).success).toBe(false);
    expect(approvalPolicySchema.safeParse({ tools: { 'bad name!': 'ask' } }).success).toBe(false);
    expect(approvalPolicySchema.safeParse({ extra: true }).success).toBe(false);
  });
});

describe('dispatch with an approval gate', () => {
  it('parks the asked call without breaking up the parallel group around it, and keeps its slot', async () => {
    const timeline = new Timeline();
    const read = timedTool({ name: 'read', mode: 'parallel', timeline, waitMs: () => 40 });
    const peek = timedTool({ name: 'peek', mode: 'parallel', timeline });
    const events: TurnEventBody[] = [];
    const result = await dispatchToolCalls({
      calls: [
        { callId: 'c1', name: 'read', arguments: '{"id":"a"}' },
        { callId: 'c2', name: 'peek', arguments: '{"id":"p"}' },
        { callId: 'c3', name: 'read', arguments: '{"id":"b"}' },
      ],
      toolMap: createToolMap([read, peek]),
      parallelLimit: 4,
      runtime: toolCallRuntime({ events }),
      gate: createApprovalGate({ policy: { tools: { peek: 'ask' } }, parkedCallIds: new Set() }),
    });
    expect(timeline.maxActive).toBe(2);
    expect(timeline.entries).not.toContain('start:p');
    expect(result.parked).toEqual([
      { index: 1, call: { callId: 'c2', name: 'peek', arguments: '{"id":"p"}' }, request: expect.objectContaining({ name: 'peek', arguments: { id: 'p' }, argumentsHash: sha256('{"id":"p"}'), label: 'Waiting for approval: Running p' }) },
    ]);
    expect(result.slots.map((slot) => slot?.call_id)).toEqual(['c1', undefined, 'c3']);
    expect(result.outputs.map((output) => output.output)).toEqual(['done a', 'done b']);
    expect(eventsOf(events, 'tool.started').map((event) => event.callId)).toEqual(['c1', 'c3']);
  });

  it('refuses a deny tool without asking, and a repeated call id instead of parking it twice', async () => {
    const timeline = new Timeline();
    const peek = timedTool({ name: 'peek', mode: 'parallel', timeline });
    const read = timedTool({ name: 'read', mode: 'parallel', timeline });
    const events: TurnEventBody[] = [];
    const result = await dispatchToolCalls({
      calls: [
        { callId: 'same', name: 'peek', arguments: '{"id":"1"}' },
        { callId: 'same', name: 'peek', arguments: '{"id":"2"}' },
        { callId: 'r', name: 'read', arguments: '{"id":"3"}' },
      ],
      toolMap: createToolMap([peek, read]),
      parallelLimit: 4,
      runtime: toolCallRuntime({ events }),
      gate: createApprovalGate({ policy: { tools: { peek: 'ask', read: 'deny' } }, parkedCallIds: new Set() }),
    });
    expect(result.parked.map((entry) => entry.index)).toEqual([0]);
    expect(timeline.entries).toEqual([]);
    const failed = eventsOf(events, 'tool.failed');
    expect(failed.map((event) => [event.callId, event.error.code])).toEqual([
      ['same', 'denied'],
      ['r', 'denied'],
    ]);
    expect(failed[0]?.error.message).toContain('reuses the id');
    expect(failed[1]?.output).toContain('approval policy is "deny"');
    expect(failed[1]?.label).toBe('Running 3');
  });

  it('answers a parked call like any unstarted one when the turn is cancelled', async () => {
    const controller = new AbortController();
    const slow = tool<{ id: string }>({
      name: 'slow',
      executionMode: 'sequential',
      execute: async (_params, context) => {
        controller.abort();
        await new Promise((resolve) => setTimeout(resolve, 5));
        context.signal.throwIfAborted();
        return { content: 'late' };
      },
    });
    const peek = timedTool({ name: 'peek', mode: 'parallel', timeline: new Timeline() });
    const result = await dispatchToolCalls({
      calls: [
        { callId: 'p', name: 'peek', arguments: '{"id":"1"}' },
        { callId: 's', name: 'slow', arguments: '{"id":"2"}' },
      ],
      toolMap: createToolMap([peek, slow]),
      parallelLimit: 4,
      runtime: toolCallRuntime({ signal: controller.signal }),
      gate: createApprovalGate({ policy: { tools: { peek: 'ask' } }, parkedCallIds: new Set() }),
    });
    expect(result.parked).toEqual([]);
    expect(result.outputs.map((output) => output.call_id)).toEqual(['p', 's']);
    expect(result.outputs[0]?.output).toContain('cancelled');
  });
});

describe('the scripted model', () => {
  it('starts at a stored step and says how many it has taken, so a resumed turn goes on where it stopped', async () => {
    const model = createScriptedModel({ script: [{ text: 'one' }, { calls: [{ name: 'x', arguments: {} }] }, { text: 'three' }], startAt: 1 });
    const options = { signal: new AbortController().signal, onTextDelta: () => undefined };
    const request = { input: [], tools: [], toolChoice: 'auto' as const };
    const second = await model.respond(request, options);
    expect(second.calls).toEqual([{ callId: 'call_2_1', name: 'x', arguments: '{}' }]);
    expect(model.stepsTaken?.()).toBe(2);
    expect((await model.respond(request, options)).text).toBe('three');
    expect(model.stepsTaken?.()).toBe(3);
  });
});
