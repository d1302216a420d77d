import { describe, expect, it } from 'vitest';
import { QUIET_REQUEST_MS } from '../../src/models/waiting-request.js';
import { useProviderRuntime } from '../support/provider-runtime.js';
import { readJson } from '../support/test-runtime.js';

const content = 'A line of notes, with "quotes" and ünïcødé, read back by the model.\n'.repeat(60);

describe('a turn that waits on its model (real HTTP)', () => {
  const setup = useProviderRuntime();

  it('sends its conversation byte for byte after a wait long enough to deflate it', async () => {
    const before = setup.provider.requests.length;
    setup.provider.enqueue(
      { calls: [{ name: 'write_file', callId: 'call_w', arguments: JSON.stringify({ path: 'notes.md', content }) }] },
      { calls: [{ name: 'read_file', callId: 'call_r', arguments: '{"path":"notes.md"}' }] },
      // This request waits past a quiet period and a sweep: its conversation's long texts are deflated meanwhile.
      { calls: [{ name: 'list_files', callId: 'call_l', arguments: '{}' }], headersDelayMs: 2 * QUIET_REQUEST_MS + 500 },
      { text: 'Done.' },
    );
    const response = await fetch(`${setup.runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'waiting-agent', tools: { computer: true } }, model: { name: 'gpt-5.1' }, input: 'write, read, list' }),
    });
    const body = await readJson(response);
    expect(body).toMatchObject({ status: 'completed', output: 'Done.' });

    const [, , waited, after] = setup.provider.requests.slice(before);
    const inputText = (raw: string) => raw.slice(raw.indexOf('"input":['), raw.indexOf('],"tools":'));
    // The request after the wait carries what the waiting one did, byte for byte, and more after it.
    expect(inputText(after!.rawBody).startsWith(inputText(waited!.rawBody))).toBe(true);
    const readOutput = (after!.body.input as { type: string; call_id?: string; output?: string }[]).find((item) => item.type === 'function_call_output' && item.call_id === 'call_r');
    expect(readOutput?.output).toContain(`60\tA line of notes, with "quotes" and ünïcødé, read back by the model.`);
    expect(Buffer.byteLength(after!.rawBody)).toBe(Number(after!.headers['content-length']));
  }, 20_000);
});
