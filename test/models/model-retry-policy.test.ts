import { describe, expect, it } from 'vitest';
import { isRetryableStatus, maxRetryAfterMs, retryDelayMs } from '../../src/models/model-retry-policy.js';
import { sleepWithSignal } from '../../src/models/sleep-with-signal.js';

const now = (): number => Date.parse('2026-01-01T00:00:00Z');

describe('model retry policy', () => {
  it('retries timeouts, conflicts, rate limits and server errors only', () => {
    expect([408, 409, 429, 500, 502, 503, 504, 599].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 413, 422].some(isRetryableStatus)).toBe(false);
  });

  it('backs off exponentially with jitter inside [half, whole] of the step, up to a ceiling', () => {
    const low = (retryIndex: number): number => retryDelayMs({ retryIndex, random: () => 0, now });
    const high = (retryIndex: number): number => retryDelayMs({ retryIndex, random: () => 0.999999, now });
    expect([0, 1, 2, 3, 4, 10].map(low)).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    expect([0, 1, 2, 3, 4, 10].map(high)).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it('honours retry-after-ms, then retry-after in seconds or as an HTTP date', () => {
    const delay = (headers: Record<string, string>): number => retryDelayMs({ retryIndex: 0, headers: new Headers(headers), random: () => 0.5, now });
    expect(delay({ 'retry-after-ms': '1234', 'retry-after': '9' })).toBe(1234);
    expect(delay({ 'retry-after': '1.5' })).toBe(1500);
    expect(delay({ 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' })).toBe(7000);
  });

  it('caps what the provider asks for, treats the past as now, and ignores nonsense', () => {
    const delay = (headers: Record<string, string>): number => retryDelayMs({ retryIndex: 0, headers: new Headers(headers), random: () => 0.5, now });
    expect(delay({ 'retry-after': '86400' })).toBe(maxRetryAfterMs);
    expect(delay({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' })).toBe(0);
    expect(delay({ 'retry-after': 'soon', 'retry-after-ms': '' })).toBe(375);
  });
});

describe('sleepWithSignal', () => {
  it('rejects at once with the reason when aborted mid-wait', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const waiting = sleepWithSignal(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('rejects without waiting when the signal is already aborted', async () => {
    await expect(sleepWithSignal(60_000, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('resolves after the wait', async () => {
    await expect(sleepWithSignal(1, new AbortController().signal)).resolves.toBeUndefined();
  });
});
