import type { ServerResponse } from 'node:http';
import { abortTogether } from '../concurrency/abort-together.js';

/**
 * A signal that aborts when the client goes away before its answer is complete. Take it as
 * soon as the request reaches its handler, before any slow step: a client that left earlier
 * (while the body was read, or while the turn was being planned) is seen at once, not missed
 * because the `close` event fired before anyone listened.
 *
 * A client seen gone at once aborts at once; one that goes later aborts with every other
 * departure read in the same turn of the event loop (abortTogether), so that when a crowd
 * leaves, every turn's upstream requests are closed before the turns' unwinding runs.
 */
export function watchClientDeparture(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (response.destroyed || response.socket === null || response.socket.destroyed) controller.abort(departure());
  else {
    response.once('close', () => {
      if (!response.writableFinished) abortTogether(controller, departure());
    });
  }
  return controller.signal;
}

function departure(): Error {
  return new Error('the client went away');
}
