import { describe, expect, it } from 'vitest';
import { EventWindow, QUIET_WINDOW_MS, numberEvent } from '../../src/turns/event-window.js';
import { waitUntil } from '../support/wait-until.js';

const event = (seq: number, text = 'x') => numberEvent({ turnId: 'turn_w', seq, at: '2026-12-01T00:00:00.000Z', body: { type: 'message.delta', iteration: 1, delta: text } });

describe('a running turn\'s event window', () => {
  it('keeps the last 64 events, and says it no longer covers what it dropped', () => {
    const window = new EventWindow();
    for (let seq = 1; seq <= 100; seq += 1) window.push(event(seq));
    expect(window.after(0).map((entry) => entry.event.seq)).toEqual(Array.from({ length: 64 }, (_, index) => 37 + index));
    expect(window.covers(36)).toBe(true);
    expect(window.covers(35)).toBe(false);
    expect(window.covers(100)).toBe(true);
  });

  it('keeps at most 16 KiB of event text, but always the last event, however large', () => {
    const window = new EventWindow();
    for (let seq = 1; seq <= 10; seq += 1) window.push(event(seq, 'y'.repeat(3_000)));
    const kept = window.after(0);
    expect(kept.reduce((chars, entry) => chars + entry.stored.json.length, 0)).toBeLessThanOrEqual(16 * 1024);
    expect(kept.at(-1)?.event.seq).toBe(10);
    expect(kept.length).toBe(5);
    window.push(event(11, 'z'.repeat(40_000)));
    expect(window.after(0).map((entry) => entry.event.seq)).toEqual([11]);
    expect(window.covers(10)).toBe(true);
    expect(window.covers(9)).toBe(false);
  });

  it('lets every event go once no event has come for a second, and keeps where it is', () => {
    const window = new EventWindow();
    // The last push happened between these two readings of the clock, however slowly they ran.
    const beforeLastPush = performance.now();
    for (let seq = 1; seq <= 5; seq += 1) window.push(event(seq, 'w'.repeat(1_000)));
    const pushedAt = performance.now();
    expect(window.trimIfQuiet(beforeLastPush + QUIET_WINDOW_MS / 2, QUIET_WINDOW_MS)).toBe(false);
    expect(window.after(0)).toHaveLength(5);
    expect(window.trimIfQuiet(pushedAt + QUIET_WINDOW_MS, QUIET_WINDOW_MS)).toBe(true);
    expect(window.after(0)).toEqual([]);
    // A listener that has seen the last event still attaches here; one behind it reads the store first.
    expect(window.covers(5)).toBe(true);
    expect(window.covers(4)).toBe(false);
    // The size bound counts only what is left: ten events of 1 KB fit again.
    for (let seq = 6; seq <= 15; seq += 1) window.push(event(seq, 'w'.repeat(1_000)));
    expect(window.after(0)[0]?.event.seq).toBe(6);
    expect(window.covers(5)).toBe(true);
  });

  it('is trimmed by the process\'s sweep, without being asked, once its turn has gone quiet', async () => {
    const window = new EventWindow();
    for (let seq = 1; seq <= 3; seq += 1) window.push(event(seq));
    expect(window.after(0)).toHaveLength(3);
    // Within two sweeps of going quiet, or later on a loaded machine: waited for, not timed.
    const trimmed = (): true | undefined => (window.after(0).length === 0 ? true : undefined);
    await waitUntil('the sweep to trim the window', trimmed);
    expect(window.covers(3)).toBe(true);
    expect(window.covers(2)).toBe(false);
    // Filled again after the sweep let it go, it is swept again.
    window.push(event(4));
    expect(window.after(0)).toHaveLength(1);
    await waitUntil('the sweep to trim the window again', trimmed);
    expect(window.covers(4)).toBe(true);
  });
});
