import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { onePerLoopTurn } from '../../src/concurrency/one-per-loop-turn.js';

describe('onePerLoopTurn', () => {
  let server: Server | undefined;
  let client: Socket | undefined;
  afterEach(async () => {
    client?.destroy();
    server?.close();
    if (server !== undefined) await once(server, 'close');
    server = undefined;
  });

  it('lets waiters go in order, one per turn of the event loop, so I/O that arrives meanwhile is seen between them', async () => {
    const log: string[] = [];
    let peer: Socket | undefined;
    server = createServer((socket) => {
      peer = socket;
      socket.on('data', (chunk) => log.push(`data ${chunk.toString()}`));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    while (peer === undefined) await new Promise((resolve) => setImmediate(resolve));

    const writer = client;
    await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        await onePerLoopTurn();
        log.push(`released ${name}`);
        // Something arrives while the others still wait: it is read before the next goes.
        if (name === 'a') writer.write('x');
      }),
    );
    expect(log).toEqual(['released a', 'data x', 'released b', 'released c']);
  });
});
