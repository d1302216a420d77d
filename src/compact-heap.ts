import v8 from 'node:v8';

/**
 * Has V8 compact its old space on every full garbage collection, not only when its heuristics
 * pick a page as fragmented enough (and then only up to a few MB per collection).
 *
 * Why: a burst of turns starting together promotes its short-lived request and parsing objects
 * beside the state each waiting turn keeps, and once the burst's garbage is collected those
 * turns' objects are left scattered over half-empty pages that V8 keeps. Measured in the load
 * bench (1,000 turns waiting on their model after such a burst, Node 20): old space allocated
 * 203 KB per waiting turn for 117 KB of live objects, and 127 KB with this on; RSS per waiting
 * turn 220 → 159 KB. Full collections are rare next to scavenges, so the CPU per turn does not
 * move in the turn bench (see README, Load).
 *
 * Set once at start, before the first turn; Node lets V8 flags change after its start.
 */
export function compactHeapOnFullGc(on: boolean): void {
  v8.setFlagsFromString(on ? '--compact-on-every-full-gc' : '--no-compact-on-every-full-gc');
}
