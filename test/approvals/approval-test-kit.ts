import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { eventsOf, openStream, type OpenStream } from '../support/sse-client.js';
import { readJson } from '../support/test-runtime.js';

/** SHA-256 of sorted-key, whitespace-free JSON: RFC 8785 for the strings and integers these tests use. */
export function expectedHash(value: unknown): string {
  const canonical = (item: unknown): string => {
    if (Array.isArray(item)) return `[${item.map(canonical).join(',')}]`;
    if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonical(entry)}`).join(',')}}`;
    }
    return JSON.stringify(item);
  };
  return createHash('sha256').update(canonical(value), 'utf8').digest('hex');
}

/** Starts a streaming turn and returns the stream and the turn id. */
export async function startStreamingTurn(baseUrl: string, body: unknown): Promise<{ stream: OpenStream; turnId: string }> {
  const stream = await openStream({ url: `${baseUrl}/turns`, body });
  expect(stream.response.statusCode).toBe(200);
  return { stream, turnId: String(stream.response.headers['turn-id']) };
}

/** Polls the record until it is `requires_action` with `count` pending calls (bounded: fails after `timeoutMs`). */
export async function waitForPending(baseUrl: string, turnId: string, count = 1, timeoutMs = 15_000): Promise<any> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const record = await readJson(await fetch(`${baseUrl}/turns/${turnId}`));
    if (record.status === 'requires_action' && record.pendingApprovals?.length === count) return record;
    if (performance.now() > deadline) throw new Error(`turn ${turnId} is not waiting for ${count} approvals: ${JSON.stringify(record)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls the record until its status is not `running` / `requires_action` (bounded). */
export async function waitForEnd(baseUrl: string, turnId: string, timeoutMs = 20_000): Promise<any> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const record = await readJson(await fetch(`${baseUrl}/turns/${turnId}`));
    if (record.status !== 'running' && record.status !== 'requires_action') return record;
    if (performance.now() > deadline) throw new Error(`turn ${turnId} did not end: ${JSON.stringify(record)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function decide(baseUrl: string, turnId: string, callId: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/turns/${turnId}/approvals/${encodeURIComponent(callId)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await readJson(response) };
}

/** Every stored event of a turn. */
export async function storedEvents(baseUrl: string, turnId: string): Promise<Record<string, any>[]> {
  const body = (await readJson(await fetch(`${baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } }))) as { events: Record<string, any>[] };
  return body.events;
}

/** Seqs run 1, 2, 3 … with no gap and no repeat. */
export function expectContiguousSeqs(events: readonly Record<string, unknown>[]): void {
  expect(events.map((event) => event['seq'])).toEqual(events.map((_event, index) => index + 1));
}

export { eventsOf };
