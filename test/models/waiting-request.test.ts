import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isItemTextDeflated, jsonOutputItem } from '../../src/models/item-json.js';
import type { ConversationItem } from '../../src/models/model-client.js';
import { QUIET_REQUEST_MS } from '../../src/models/waiting-request.js';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
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
    // Longer than a quiet period and one sweep period after it.
    provider.enqueue({ text: 'first', headersDelayMs: 2 * QUIET_REQUEST_MS + 500 }, { text: 'second' });
    await respondCollecting(model, { input, tools: [], toolChoice: 'auto' });
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
    await respondCollecting(model, { input, tools: [], toolChoice: 'auto' });
    // Past the time a waiting request would have been deflated by.
    await new Promise((resolve) => setTimeout(resolve, 2 * QUIET_REQUEST_MS + 200));
    expect(isItemTextDeflated(input[2]!)).toBe(false);
  });
});
