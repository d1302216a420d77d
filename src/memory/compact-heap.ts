import v8 from 'node:v8';

/**
 * Has V8 compact its old space on every full garbage collection, not only when its heuristics
 * pick a page as fragmented enough (and then only up to a few MB per collection).
 *
 * Why: a burst of turns starting together promotes its short-lived request and parsing objects
 * beside the state each waiting turn keeps, and once the burst's garbage is collected those
 * turns' objects are left scattered over half-empty pages that V8 keeps. Measured in the load
 * bench (1,000 turns waiting on their model after such a burst, Node 20, with item 27 of the
 * README's Load section in both): old space allocated 159 KB per waiting turn for 99 KB of heap
 * used without this, 100–118 KB with it (README, Load, item 28). Full collections are rare next
 * to scavenges, so the CPU per turn did not move in the turn bench.
 *
 * Set once at start, before the first turn, through `v8.setFlagsFromString`: V8 reads this flag
 * at each full collection, and the load bench's runs with it set there and without it differ as
 * the same flag given on the command line does.
 */
export function compactHeapOnFullGc(on: boolean): void {
  v8.setFlagsFromString(on ? '--compact-on-every-full-gc' : '--no-compact-on-every-full-gc');
}
