/**
 * Policies the chain answered missing, as the settler and the scheduler see them: one answer is
 * not a deletion. An RPC node behind the one that confirmed a policy's creation (a pool of nodes,
 * one some seconds late) answers a policy created moments before as missing; taken for deleted,
 * every chunk the policy had served was made unbillable, or its due subscription payment dropped,
 * and the merchant was never paid. A policy is gone only when a read at least `confirmMs` after
 * the first says so too. A sighting no read followed for a minute (or `confirmMs`, if longer)
 * starts over: the policy left this process's rounds (another process charged it) and a later
 * answer of a lagging node is a first one again. Each process keeps its own sightings.
 */
export interface Absences {
  /** the policy was read missing now: whether its absence is confirmed */
  missing(policy: string): boolean;
  /** the policy was read on chain */
  found(policy: string): void;
  /** forgets the sightings no read followed (a settler or scheduler round calls it) */
  prune(): void;
}

export function createAbsences(confirmMs: number, nowMs: () => number): Absences {
  const seen = new Map<string, { first: number; last: number }>();
  const staleMs = Math.max(confirmMs, 60_000);
  return {
    missing(policy) {
      const now = nowMs();
      const s = seen.get(policy);
      const first = s && now - s.last <= staleMs ? s.first : now;
      if (now - first >= confirmMs) {
        seen.delete(policy);
        return true;
      }
      seen.set(policy, { first, last: now });
      return false;
    },
    found(policy) {
      seen.delete(policy);
    },
    prune() {
      const now = nowMs();
      for (const [policy, s] of seen) if (now - s.last > staleMs) seen.delete(policy);
    },
  };
}
