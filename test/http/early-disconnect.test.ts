import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/** Sends a whole POST /turns and closes the connection at once, before any byte of the answer. */
function postAndVanish(port: number, body: unknown, accept: string): Promise<void> {
  return new Promise((resolve) => {
    const payload = JSON.stringify(body);
    const socket = connect(port, '127.0.0.1', () => {
      socket.end(`POST /turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: ${accept}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`, () => {
        socket.destroy();
        resolve();
      });
    });
    socket.on('error', () => {
      resolve();
    });
  });
}

describe('a client that leaves before the first byte of the answer', () => {
  const turnIds: string[] = [];
  let runtime: TestRuntime;
  let counter = 0;
  beforeAll(async () => {
    runtime = await startTestRuntime({
      env: { MAX_CONCURRENT_TURNS: '40' },
      newTurnId: () => {
        counter += 1;
        const id = `turn_early_${counter}`;
        turnIds.push(id);
        return id;
      },
    });
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('is noticed for every such turn: each ends cancelled (client_disconnected) and frees its slot', async () => {
    const port = (runtime.app.server.address() as AddressInfo).port;
    // Each turn would think for 30 s and then write a file: none may run for nobody.
    const body = {
      agent: { id: 'vanishing', tools: { computer: true } },
      input: 'x',
      model: { script: [{ delayMs: 30_000, calls: [{ name: 'write_file', arguments: { path: 'ran-for-nobody.txt', content: 'x' } }] }] },
    };
    await Promise.all(Array.from({ length: 30 }, (_, index) => postAndVanish(port, body, index % 3 === 0 ? 'application/json' : index % 3 === 1 ? 'text/event-stream' : 'application/x-ndjson')));

    // Generous for a loaded machine, and still well before the 30 s the turns would think.
    const deadline = performance.now() + 20_000;
    let records: { status: string }[];
    for (;;) {
      const read = (turnId: string): Promise<{ status: string }> => fetch(`${runtime.baseUrl}/turns/${turnId}`).then(readJson) as Promise<{ status: string }>;
      records = await Promise.all(turnIds.map(read));
      if (turnIds.length === 30 && records.every((record) => record.status !== 'running')) break;
      if (performance.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(turnIds).toHaveLength(30);
    for (const record of records) expect(record).toMatchObject({ status: 'cancelled', error: { reason: 'client_disconnected' } });
    // The slot is given back just after the turn's end is stored (a reader may see the record first).
    let running: unknown;
    for (const until = performance.now() + 10_000; performance.now() < until; await new Promise((resolve) => setTimeout(resolve, 20))) {
      running = (await readJson(await fetch(`${runtime.baseUrl}/readyz`))).runningTurns;
      if (running === 0) break;
    }
    expect(running).toBe(0);
  }, 60_000);
});
