/**
 * A worker's slots: a slot is an HTTP request, and frees as soon as a delivery's POST
 * succeeds while its record is still being committed (group commit), so the database's
 * latency does not throttle the requests. Deliveries still recording are bounded by
 * RECORDING_FACTOR; up to as many as the slots wait claimed ahead.
 */
import { performance } from 'node:perf_hooks';
import type { Db } from '../../../infra/postgres/database.js';
import { releaseHeld, type ClaimedDelivery } from './outbox-store.js';
import { createReadyQueue, type ReadyQueue } from './ready-queue.js';

/** Deliveries a worker may have in flight, POSTing or recording, per slot of WEBHOOK_CONCURRENCY. */
const RECORDING_FACTOR = 4;

export interface SlotsDeps {
  concurrency: number;
  /** how long a delivery may wait claimed ahead before it is given back */
  maxWaitMs: number;
  db: Db;
  workerId: string;
  stop: AbortSignal;
  /** Runs one delivery to its end; `release` frees its slot (called when the POST has succeeded). */
  run: (row: ClaimedDelivery, release: () => void) => Promise<void>;
  /** Called whenever a slot frees. */
  slotFreed: () => void;
}

export interface Slots {
  /** Deliveries claimed or popped, not started yet. */
  readonly ahead: ReadyQueue;
  /** Deliveries started and not yet recorded. */
  readonly inflight: Set<Promise<void>>;
  /** Slots taken. */
  busy: () => number;
  /** Starts deliveries claimed ahead while slots are free; gives back those that waited too long. */
  pump: () => void;
  /** Room for more deliveries, claimed or pushed: as many as the slots and the recording bound allow, twice the slots ahead. */
  room: () => number;
  /** The room a pop waits for (./ready-pop.ts). */
  readonly popRoom: number;
  /** Fewer than a quarter of the slots' deliveries wait claimed or popped. */
  starving: () => boolean;
  /** Resolves when room frees, or after 100 ms. */
  roomFreed: () => Promise<void>;
  /** Wakes the pop waiting for room, once there is room enough for it (`always`: stopping). */
  freed: (always?: boolean) => void;
}

export function createSlots(deps: SlotsDeps): Slots {
  const { concurrency } = deps;
  let busy = 0;
  const inflight = new Set<Promise<void>>();
  const maxInflight = concurrency * RECORDING_FACTOR;
  // real time, not the application clock (tests move that one by days)
  const ahead = createReadyQueue(concurrency, deps.maxWaitMs, () => performance.now());

  function launch(row: ClaimedDelivery): void {
    busy += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      busy -= 1;
      pump();
      deps.slotFreed();
      freed();
    };
    const p = deps.run(row, release)
      .finally(() => { inflight.delete(p); release(); deps.slotFreed(); freed(); });
    inflight.add(p);
  }

  function pump(): void {
    if (deps.stop.aborted) return;
    const stale = ahead.stale();
    if (stale.length > 0) void releaseHeld(deps.db, deps.workerId, stale).catch(() => undefined);
    while (busy < concurrency && inflight.size < maxInflight) {
      const row = ahead.take();
      if (!row) break;
      launch(row);
    }
  }

  const room = () => Math.min(2 * concurrency - busy, maxInflight - inflight.size) - ahead.size();
  let roomWaiters: (() => void)[] = [];
  // a pop waits for half a worker's slots of room while a quarter are still waiting claimed or popped (./ready-pop.ts)
  const popRoom = Math.max(1, Math.floor(concurrency / 2));
  const starving = () => ahead.size() < Math.max(1, Math.floor(concurrency / 4));
  function freed(always = false): void {
    if (roomWaiters.length === 0) return;
    if (!always) {
      const r = room();
      if (r <= 0 || (r < popRoom && !starving())) return;
    }
    const ws = roomWaiters;
    roomWaiters = [];
    for (const w of ws) w();
  }
  const roomFreed = () => new Promise<void>((resolve) => {
    roomWaiters.push(resolve);
    setTimeout(resolve, 100); // a slot that frees without a signal (a quick retry's wait) is seen anyway
  });

  return { ahead, inflight, busy: () => busy, pump, room, popRoom, starving, roomFreed, freed };
}
