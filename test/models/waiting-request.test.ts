import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isItemTextDeflated, jsonOutputItem } from '../../src/models/item-json.js';
import type { ConversationItem } from '../../src/models/model-client.js';
import { QUIET_REQUEST_MS } from '../../src/models/waiting-request.js';
import { heldAnswer, startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { waitUntil } from '../support/wait-until.js';
import { createTestModel, respondCollecting } from './model-test-kit.js';

const output = 'A line of a file the tool read, "quoted", ünïcødé.\n'.repeat(100);

function conversation(): ConversationItem[] {
  return [
    { type: 'message', role: 'user', content: 'Read the file.' },
    { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
    jsonOutputItem('call_1', JSON.stringify(output)),
  ];
}

describe('a model request that waits', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('has its long item texts deflated while it waits, and the next request still carries them byte for byte', async () => {
    const { model } = createTestModel(provider);
    const input = conversation();
    // The provider answers only once the sweep has deflated the waiting request's texts (a quiet
    // period and a sweep after it, or longer on a loaded machine), so the answer cannot beat it.
    const held = heldAnswer();
    provider.enqueue({ text: 'first', headersAfter: held.answered }, { text: 'second' });
    const waiting = respondCollecting(model, { input, tools: [], toolChoice: 'auto' });
    await waitUntil('the waiting request to be deflated', () => (isItemTextDeflated(input[2]!) ? true : undefined));
    held.answer();
    await waiting;
    expect(isItemTextDeflated(input[2]!)).toBe(true);
    expect(isItemTextDeflated(input[1]!)).toBe(false); // short: kept as text

    await respondCollecting(model, { input, tools: [], toolChoice: 'auto' });
    const [first, second] = provider.requests;
    expect(second!.rawBody).toBe(first!.rawBody);
    expect(second!.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Read the file.' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
      { type: 'function_call_output', call_id: 'call_1', output },
    ]);
  });

  it('deflates nothing when the answer comes quickly', async () => {
    const { model } = createTestModel(provider);
    const input = conversation();
    provider.enqueue({ text: 'quick' });
    const askedAt = performance.now();
    await respondCollecting(model, { input, tools: [], toolChoice: 'auto' });
    const answeredWithinQuietPeriod = performance.now() - askedAt < QUIET_REQUEST_MS;
    // Past the time a waiting request would have been deflated by.
    await new Promise((resolve) => setTimeout(resolve, 2 * QUIET_REQUEST_MS + 200));
    // Answered within a quiet period, it is never deflated. A machine too loaded to answer a local
    // request within a second would rightly have deflated it: then there is nothing to check.
    if (answeredWithinQuietPeriod) expect(isItemTextDeflated(input[2]!)).toBe(false);
  });
});
