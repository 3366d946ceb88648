/**
 * The money model's seeded choices: one stream per seed (mulberry32), so a seed replays the
 * same sequence of actions and terms.
 */
export interface Rng {
  /** uniform in [0, 1) */
  next(): number;
  /** an integer in [lo, hi] */
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  /** a name drawn with the given weights */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
}

export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next, int,
    pick: (xs) => {
      if (xs.length === 0) throw new Error('pick from nothing');
      return xs[int(0, xs.length - 1)]!;
    },
    weighted: (weights) => {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      let r = next() * entries.reduce((s, [, w]) => s + w, 0);
      for (const [k, w] of entries) {
        r -= w;
        if (r < 0) return k;
      }
      return entries.at(-1)![0];
    },
  };
}
