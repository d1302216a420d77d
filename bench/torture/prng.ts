/**
 * A seeded pseudo-random source (mulberry32): the same seed gives the same sequence, so a
 * torture round's plan (what it submits, when it kills, which replica) can be made again.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      const item = items[int(0, items.length - 1)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
  };
}

/** The random source of one round: derived from the run's seed and the round alone, so round N plans the same whatever ran before it. */
export function roundRandom(seed: number, round: number): Random {
  return mulberry32((seed ^ Math.imul(round + 1, 0x9e3779b1)) >>> 0);
}
