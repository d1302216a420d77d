import type { ServerResponse } from 'node:http';

/**
 * A signal that aborts when the client goes away before its answer is complete. Take it as
 * soon as the request reaches its handler, before any slow step: a client that left earlier
 * (while the body was read, or while the turn was being planned) is seen at once, not missed
 * because the `close` event fired before anyone listened.
 */
export function watchClientDeparture(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const departed = () => {
    if (!response.writableFinished) controller.abort(new Error('the client went away'));
  };
  if (response.destroyed || response.socket === null || response.socket.destroyed) departed();
  else response.once('close', departed);
  return controller.signal;
}
