/**
 * Deliveries a worker claimed ahead of its free slots, oldest first. Each holds a lease
 * sized for one attempt plus a margin, counted from its claim; one that waited longer than
 * `maxWaitMs` for a slot (every slot stuck on slow receivers) is not started late on a
 * shrinking lease but handed back by `stale`, for the worker to give back to the outbox.
 */
import type { ClaimedDelivery } from './outbox-store.js';

export interface ReadyQueue {
  add(rows: readonly ClaimedDelivery[]): void;
  /** the oldest delivery still fresh, if any */
  take(): ClaimedDelivery | undefined;
  /** removes and returns the deliveries that waited too long */
  stale(): ClaimedDelivery[];
  /** removes and returns every delivery */
  drain(): ClaimedDelivery[];
  size(): number;
}

export function createReadyQueue(capacityHint: number, maxWaitMs: number, now: () => number): ReadyQueue {
  let rows: { row: ClaimedDelivery; at: number }[] = [];
  let head = 0;
  const compact = () => {
    if (head > capacityHint && head * 2 > rows.length) { rows = rows.slice(head); head = 0; }
  };
  return {
    add(claimed) {
      const at = now();
      for (const row of claimed) rows.push({ row, at });
    },
    take() {
      const r = rows[head];
      if (!r || now() - r.at > maxWaitMs) return undefined; // a stale one leaves through stale()
      head += 1;
      compact();
      return r.row;
    },
    stale() {
      const t = now();
      const out: ClaimedDelivery[] = [];
      while (head < rows.length && t - rows[head]!.at > maxWaitMs) out.push(rows[head++]!.row);
      compact();
      return out;
    },
    drain() {
      const out = rows.slice(head).map((r) => r.row);
      rows = [];
      head = 0;
      return out;
    },
    size: () => rows.length - head,
  };
}
