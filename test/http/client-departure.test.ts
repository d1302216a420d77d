import { once } from 'node:events';
import { Agent, createServer, request, type ClientRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { watchClientDeparture } from '../../src/http/client-departure.js';

/**
 * A server whose every request is watched like POST /turns watches its own: each departure's
 * abort listener notes `abort <n>`, and the unwinding it starts (here, one microtask, as a
 * turn's is many) notes `unwind <n>`.
 */
async function startWatchingServer(log: string[]): Promise<{ server: Server; port: number; watched: () => number }> {
  let count = 0;
  const server = createServer((incoming, response) => {
    const name = incoming.url?.slice(1) ?? '';
    const departure = watchClientDeparture(response);
    count += 1;
    departure.addEventListener('abort', () => {
      log.push(`abort ${name}`);
      queueMicrotask(() => log.push(`unwind ${name}`));
    });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, watched: () => count };
}

function openStream(port: number, name: string): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: `/${name}` }, () => {
      resolve(outgoing);
    });
    outgoing.on('error', (error) => {
      if (!outgoing.destroyed) reject(error);
    });
    outgoing.end();
  });
}

describe('watchClientDeparture', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server !== undefined) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('aborts every client that left in the same moment before any of their unwinding runs', async () => {
    const log: string[] = [];
    const started = await startWatchingServer(log);
    server = started.server;
    const names = ['a', 'b', 'c', 'd'];
    const streams = await Promise.all(names.map((name) => openStream(started.port, name)));
    expect(started.watched()).toBe(4);
    // All four leave at once: their ends reach the server in one read of the event loop.
    for (const stream of streams) stream.destroy();
    for (let waited = 0; log.length < 8 && waited < 2000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    // In whatever order the kernel handed the ends over, but every abort before any unwinding.
    expect(log.slice(0, 4).sort()).toEqual(names.map((name) => `abort ${name}`));
    expect(log.slice(4).sort()).toEqual(names.map((name) => `unwind ${name}`));
  });

  it('makes the errors of the aborts themselves without stacks, and those of the unwinding after them with', async () => {
    const stacks: { during?: string | undefined; after?: string | undefined; limitAfter?: number } = {};
    const limit = Error.stackTraceLimit;
    const quiet = createServer((_incoming, response) => {
      const departure = watchClientDeparture(response);
      departure.addEventListener('abort', () => {
        stacks.during = new Error('made by an abort listener').stack;
        queueMicrotask(() => {
          stacks.after = new Error('made by the unwinding').stack;
          stacks.limitAfter = Error.stackTraceLimit;
        });
      });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
    server = quiet;
    quiet.listen(0, '127.0.0.1');
    await once(quiet, 'listening');
    const stream = await openStream((quiet.address() as AddressInfo).port, 'x');
    stream.destroy();
    for (let waited = 0; stacks.after === undefined && waited < 2000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(stacks.during).toBe('Error: made by an abort listener');
    expect(stacks.after).toMatch(/^Error: made by the unwinding\n\s+at /);
    expect(stacks.limitAfter).toBe(limit);
  });

  it('aborts at once for a client that had already gone, and never for one whose answer was complete', async () => {
    const response = { destroyed: true, socket: null } as unknown as Parameters<typeof watchClientDeparture>[0];
    const signal = watchClientDeparture(response);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('the client went away');

    let finished: AbortSignal | undefined;
    const quiet = createServer((_incoming, answer) => {
      finished = watchClientDeparture(answer);
      answer.end('done');
    });
    server = quiet;
    quiet.listen(0, '127.0.0.1');
    await once(quiet, 'listening');
    const { port } = quiet.address() as AddressInfo;
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('done');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(finished?.aborted).toBe(false);
  });

  it('sees a client leave when its end is read, before the answer closes', async () => {
    const log: string[] = [];
    const quiet = createServer((_incoming, response) => {
      const departure = watchClientDeparture(response);
      departure.addEventListener('abort', () => log.push('abort'));
      response.once('close', () => log.push('close'));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
    server = quiet;
    quiet.listen(0, '127.0.0.1');
    await once(quiet, 'listening');
    const client = connect((quiet.address() as AddressInfo).port, '127.0.0.1');
    client.on('error', () => undefined);
    client.write('GET /stream HTTP/1.1\r\nhost: localhost\r\n\r\n');
    await once(client, 'data');
    // Half-closed: the server reads the end, then ends its own side and closes.
    client.end();
    for (let waited = 0; log.length < 2 && waited < 2000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    client.destroy();
    expect(log).toEqual(['abort', 'close']);
  });

  it('leaves nothing on a kept-alive socket once an answer is complete, and a later end aborts none of them', async () => {
    const signals: AbortSignal[] = [];
    const endListeners: number[] = [];
    const quiet = createServer((incoming, answer) => {
      signals.push(watchClientDeparture(answer));
      endListeners.push(incoming.socket.listenerCount('end'));
      answer.end('done');
    });
    server = quiet;
    quiet.listen(0, '127.0.0.1');
    await once(quiet, 'listening');
    const { port } = quiet.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let count = 0; count < 12; count += 1) {
      await new Promise<void>((resolve, reject) => {
        const outgoing = request({ host: '127.0.0.1', port, path: '/', agent }, (answer) => {
          answer.resume();
          answer.once('end', resolve);
        });
        outgoing.on('error', reject);
        outgoing.end();
      });
    }
    // One socket served them all, and each answer's watch was gone before the next began.
    expect(new Set(endListeners).size).toBe(1);
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signals.filter((signal) => signal.aborted)).toEqual([]);
  });
});
