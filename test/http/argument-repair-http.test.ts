import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

async function runTurn(runtime: TestRuntime, agentId: string, rawArguments: string): Promise<any> {
  const response = await fetch(`${runtime.baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      agent: { id: agentId, tools: { computer: true } },
      input: 'write the script',
      model: { script: [{ calls: [{ name: 'write_file', arguments: rawArguments }] }, { text: 'written' }] },
    }),
  });
  expect(response.status).toBe(200);
  return readJson(response);
}

describe('raw line breaks and tabs inside argument strings, through POST /turns', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('escapes them, writes exactly the text the model meant, and records the rung', async () => {
    // What models send for code: real line feeds and tabs inside the JSON string.
    const raw = '{"path": "hello.py", "content": "def hello():\n\tprint(\\"hi\\")\r\n"}';
    const body = await runTurn(runtime, 'raw-newlines', raw);
    const started = body.events.find((event: { type: string }) => event.type === 'tool.started');
    const completed = body.events.find((event: { type: string }) => event.type === 'tool.completed');
    expect(started).toMatchObject({ name: 'write_file', repair: 'escaped_control_characters' });
    expect(completed).toMatchObject({ name: 'write_file', repair: 'escaped_control_characters' });
    const written = await readFile(path.join(runtime.dataDir, 'agents', 'raw-newlines', 'home', 'hello.py'), 'utf8');
    expect(written).toBe('def hello():\n\tprint("hi")\r\n');
  });

  it('still refuses other raw control characters and strings cut off after a line break', async () => {
    for (const raw of ['{"path": "a.txt", "content": "bell\u0007"}', '{"path": "a.txt", "content": "line one\nline tw']) {
      const body = await runTurn(runtime, 'raw-refused', raw);
      const failed = body.events.find((event: { type: string }) => event.type === 'tool.failed');
      expect(failed).toMatchObject({ name: 'write_file', error: { code: 'invalid_arguments' } });
      expect(body.events.some((event: { type: string }) => event.type === 'tool.started')).toBe(false);
    }
  });
});
