/**
 * Catch-up: a socket that subscribes with `since` first gets what the payments read model
 * holds from that point, then stays live, and never gets one payment twice. The socket
 * joins its room (live delivery starts) BEFORE the read, and the node records every
 * payment the live side hands it meanwhile. Each read-model payment is then settled with
 * the notifier through its mark (emission-marks.ts):
 *
 * - 'n' not claimed: the socket was put in the event's except set in the same atomic
 *   step, so the notifier's later broadcast leaves it out; catch-up sends it.
 * - 'p' published: the PUBLISH ran before the mark was read; after a barrier on the
 *   subscriber connection (every earlier publish has reached this node's sockets) the
 *   live side either handed it over (recorded) or never will; catch-up sends it if not.
 * - 'c' being published: waited for until 'p' (then as above), for a bounded time; one
 *   still claimed after it is left to the live side, whose takeover republishes it.
 *
 * Before reading, it waits for the read model to hold what the notifier had already been
 * handed when the socket joined (read-model-wait.ts): what the notifier reads later is
 * broadcast after the join.
 *
 * Payments delivered live during catch-up may therefore come before older catch-up ones;
 * each carries slot and timestamp for ordering.
 */
import type { Socket } from 'socket.io';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { RealtimeKeys } from './keys.js';
import { classifyForCatchUp, markStates, type MarkState } from './emission-marks.js';
import { notification, paymentKey } from './notification.js';
import { paymentsSince, slotOfSignature } from './payment-queries.js';
import type { Since } from './since.js';
import { readModelCaughtUp } from './read-model-wait.js';

export interface CatchUpDeps {
  db: Db;
  redis: Redis;
  keys: RealtimeKeys;
  clock: Clock;
  /** see RealtimeAdapter.barrier */
  barrier(): Promise<void>;
  /** most payments sent by one catch-up */
  limit: number;
  /** chain commitment reported as the payments' status */
  status: string;
  /** how long a payment the notifier is publishing is waited for */
  claimWaitMs: number;
  /** how long the payments read model is waited for, to reach what the notifier has read */
  readModelWaitMs: number;
  /** the stream and the consumer groups of the notifier and of the payments projection */
  stream: string;
  notifierGroup: string;
  paymentsGroup: string;
  onReadModelLate?(): void;
}

export class UnknownSinceError extends Error {
  constructor(readonly signature: string) {
    super(`no indexed transaction has signature ${signature}`);
    this.name = 'UnknownSinceError';
  }
}

/** `more`: the limit was reached; `complete`: false when the read model stayed behind the notifier past the wait */
export interface CatchUpResult { sent: number; more: boolean; complete: boolean }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs after the socket joined the trackingId's room, with `seen` filled by the node with
 * every payment handed to the socket since before the join. Stops sending when `active()`
 * turns false (unsubscribed, disconnected).
 */
export async function catchUp(
  deps: CatchUpDeps, socket: Socket, trackingId: string, since: Since, seen: Set<string>, active: () => boolean,
): Promise<CatchUpResult> {
  const fresh = await readModelCaughtUp(deps.redis, deps.stream, deps.notifierGroup, deps.paymentsGroup, deps.readModelWaitMs, () => deps.clock.now());
  if (!fresh) deps.onReadModelLate?.();
  const sinceSlot = since.kind === 'signature' ? await slotOfSignature(deps.db, trackingId, since.signature) : undefined;
  if (since.kind === 'signature' && sinceSlot === undefined) throw new UnknownSinceError(since.signature);
  const found = await paymentsSince(deps.db, trackingId, since, sinceSlot, deps.limit + 1, deps.status);
  const more = found.length > deps.limit;
  const rows = found.slice(0, deps.limit);
  const ids = rows.map((r) => r.eventId);
  const states: MarkState[] = await classifyForCatchUp(deps.redis, deps.keys, ids, socket.id);
  const deadline = deps.clock.now() + deps.claimWaitMs;
  let waiting = states.flatMap((s, i) => (s === 'c' ? [i] : []));
  while (waiting.length > 0 && deps.clock.now() < deadline && active()) {
    await sleep(20);
    const now = await markStates(deps.redis, deps.keys, waiting.map((i) => ids[i]!));
    waiting.forEach((i, k) => { states[i] = now[k]!; });
    waiting = waiting.filter((i) => states[i] === 'c');
  }
  await deps.barrier();
  let sent = 0;
  for (const [i, row] of rows.entries()) {
    if (!active()) break;
    const key = paymentKey(row.data);
    if (states[i] === 'c' || seen.has(key)) continue;
    seen.add(key);
    socket.emit('payment', notification(row.data, deps.clock.now()));
    sent += 1;
  }
  return { sent, more, complete: fresh };
}
