import { describe, expect, it } from 'vitest';
import { abortTogether } from '../../src/concurrency/abort-together.js';
import { cancelOnDeparture } from '../../src/http/cancel-on-departure.js';
import type { CancelReason } from '../../src/events/turn-events.js';

/** A departure as watchClientDeparture makes it, a turn that notes its cancel, and the stream's follower signal. */
function streamingTurn(log: string[], name: string) {
  const departure = new AbortController();
  const following = new AbortController();
  following.signal.addEventListener('abort', () => log.push(`stream ${name} torn down`));
  const run = {
    cancel: (reason: CancelReason) => {
      log.push(`turn ${name} cancelled: ${reason}`);
    },
  };
  const stop = cancelOnDeparture({ departure: departure.signal, run, following, abandon: () => log.push(`writes ${name} stopped`) });
  return { departure, following, stop };
}

describe('cancelOnDeparture', () => {
  it('cancels every departing turn of a crowd before any of their streams is torn down', async () => {
    const log: string[] = [];
    const turns = ['a', 'b', 'c'].map((name) => streamingTurn(log, name));
    // The crowd leaves over two turns of the event loop, as over two reads of its sockets.
    abortTogether(turns[0]!.departure, new Error('the client went away'));
    abortTogether(turns[1]!.departure, new Error('the client went away'));
    await new Promise((resolve) => setImmediate(resolve));
    abortTogether(turns[2]!.departure, new Error('the client went away'));
    for (let waited = 0; log.length < 9 && waited < 2000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log).toEqual([
      'turn a cancelled: client_disconnected',
      'writes a stopped',
      'turn b cancelled: client_disconnected',
      'writes b stopped',
      'turn c cancelled: client_disconnected',
      'writes c stopped',
      'stream a torn down',
      'stream b torn down',
      'stream c torn down',
    ]);
    expect((turns[0]!.following.signal.reason as Error).message).toBe('the client went away');
  });

  it('acts at once for a client that had already gone, and not at all once the answer ended first', async () => {
    const log: string[] = [];
    const gone = new AbortController();
    gone.abort(new Error('the client went away'));
    const following = new AbortController();
    cancelOnDeparture({ departure: gone.signal, run: { cancel: (reason) => log.push(`cancelled: ${reason}`) }, following });
    expect(log).toEqual(['cancelled: client_disconnected']);
    for (let waited = 0; !following.signal.aborted && waited < 2000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(following.signal.aborted).toBe(true);

    const finished = streamingTurn(log, 'done');
    finished.stop();
    finished.departure.abort(new Error('the client went away'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual(['cancelled: client_disconnected']);
  });
});
