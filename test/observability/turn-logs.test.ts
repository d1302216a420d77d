import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { openStream } from '../support/sse-client.js';
import { runJsonTurn } from '../support/turn-waits.js';

type LogLine = Record<string, unknown> & { msg?: string };

describe('logs a person can follow', () => {
  const lines: LogLine[] = [];
  let runtime: Runtime;
  let baseUrl: string;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'turn-logs-'));
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString('utf8').split('\n')) if (text !== '') lines.push(JSON.parse(text) as LogLine);
        done();
      },
    });
    runtime = await createRuntime({ config: loadConfig({ DATA_DIR: dataDir }), logger: pino({ level: 'debug' }, sink) });
    await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(runtime.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await runtime.app.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const linesOf = (turnId: string) => lines.filter((line) => line['turnId'] === turnId);

  it('writes one info line when a turn starts and one when it ends, with what a person asks first', async () => {
    const turn = await runJsonTurn(
      { baseUrl },
      {
        agent: { id: 'log-agent', tools: { computer: true } },
        input: 'go',
        model: { script: [{ calls: [{ name: 'read_file', callId: 'read-missing', arguments: { path: 'missing.txt' } }] }, { text: 'no file' }] },
      },
    );
    const turnId = String(turn.json.id);
    const info = linesOf(turnId).filter((line) => line['level'] === 30);
    const started = info.filter((line) => line.msg === 'turn started');
    const ended = info.filter((line) => line.msg === 'turn ended');
    expect(started).toHaveLength(1);
    expect(ended).toHaveLength(1);
    expect(started[0]).toMatchObject({ turnId, agentId: 'log-agent', kind: 'text', model: 'scripted' });
    expect(ended[0]).toMatchObject({ turnId, agentId: 'log-agent', model: 'scripted', status: 'completed', outcome: 'final_answer', iterations: 2, inputTokens: 0, outputTokens: 0 });
    expect(typeof ended[0]?.['durationMs']).toBe('number');
    // The failing tool's log line names its call.
    expect(linesOf(turnId).find((line) => line.msg === 'tool failed')).toMatchObject({ callId: 'read-missing', tool: 'read_file' });
    // The request that ran the turn says which turn it was.
    expect(linesOf(turnId).some((line) => line.msg === 'request completed' && typeof line['reqId'] === 'string')).toBe(true);
  });

  it('puts the turnId on the request logs of every route about one turn', async () => {
    const turn = await runJsonTurn({ baseUrl }, { agent: { id: 'log-agent' }, input: 'x', model: { script: [{ text: 'ok' }] } });
    const turnId = String(turn.json.id);
    await fetch(`${baseUrl}/turns/${turnId}`);
    await fetch(`${baseUrl}/turns/${turnId}/tools`);
    await fetch(`${baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } });
    // POST /turns and the three GETs; each "request completed" line carries the turn's id.
    const completed = linesOf(turnId).filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(4);
    expect(new Set(completed.map((line) => line['reqId'])).size).toBe(4);
  });

  it('logs the end of a streamed turn that the client left, as cancelled', async () => {
    const stream = await openStream({ url: `${baseUrl}/turns`, body: { agent: { id: 'log-agent' }, input: 'x', model: { script: [{ text: 'late', delayMs: 30_000 }] } } });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    stream.destroy();
    // Generous for a loaded machine, and still well before the model's 30 s would end the turn.
    const deadline = Date.now() + 15_000;
    while (!linesOf(turnId).some((line) => line.msg === 'turn ended') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(linesOf(turnId).find((line) => line.msg === 'turn ended')).toMatchObject({ status: 'cancelled', outcome: 'client_disconnected', iterations: 1 });
  });
});
