import type { TurnRequest } from './turn-request.js';

/** Work that started a turn on its own (not an HTTP caller): shown on the turn record. */
export interface TurnOrigin {
  readonly scheduleId?: string;
  readonly backgroundJobId?: string;
}

/** A turn request as the service starts it: the HTTP request, or one made by a job or a schedule fire. */
export type StartTurnRequest = TurnRequest & { readonly origin?: TurnOrigin };
