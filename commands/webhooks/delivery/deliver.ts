/**
 * One claimed delivery: signed POSTs with the quick retries, every attempt recorded as it
 * ends, then the delivery delivered, rescheduled on the slow schedule, or dead. The
 * webhook-id is the event's identity on every attempt, whichever worker makes it.
 *
 * The receiver's answer steers what follows (./endpoint-health.ts): 410 disables the
 * endpoint; 429/503 with Retry-After pause it and the delivery waits as asked (such an
 * answer uses no retry: the 5-day rule bounds a receiver that keeps asking); any failure
 * counts in the endpoint's failure streak, any success ends it.
 *
 * Body (JSON): {id, type, createdAt, data} = the event identity, the event name, the
 * event's block time (ISO 8601; when the cluster gave none, the time the delivery was
 * queued), and the event as GET /v1/events returns it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import { PostError, type JsonPoster } from '../../../infra/http/post-json.js';
import { afterFailedRound, leaseMarginMs, quickDelays, retryLeaseMs, type ScheduleConfig } from './schedule.js';
import { giveBack, releaseLeases, type ClaimedDelivery, type NextState, type RecordOutcome } from './outbox-store.js';
import type { RecordFn } from './attempt-recorder.js';
import type { RateLimiter } from './rate-limit.js';
import { signWithKeys } from './signer.js';
import { handToClaim } from './fanouts.js';
import { asksForPause, disableEndpoint, noteFailure, noteSuccess, pauseEndpoint, retryAfterMs } from './endpoint-health.js';

export interface DeliverDeps {
  db: Db;
  worker: string;
  /** records an attempt and moves the delivery on (createAttemptRecorder) */
  record: RecordFn;
  poster: JsonPoster;
  schedule: ScheduleConfig;
  /** the signing keys of a delivery: its secret's, then the rotated-out one's while in grace */
  keysOf(d: ClaimedDelivery): Buffer[];
  limiter: RateLimiter;
  /** the longest Retry-After honored */
  retryAfterMaxMs: number;
  now: () => number;
  logger: Logger;
}

export type DeliveryOutcome = 'delivered' | 'rescheduled' | 'dead' | 'lost' | 'gone' | 'stopped' | 'disabled' | 'deferred';

export function deliveryBody(d: { event_id: string; event_name: string; payload: unknown; created_at: Date }): string {
  const data = d.payload as { timestamp?: unknown } | null;
  const createdAt = typeof data?.timestamp === 'string' ? data.timestamp : d.created_at.toISOString();
  return JSON.stringify({ id: d.event_id, type: d.event_name, createdAt, data: d.payload });
}

/** deliveryBody of a claimed row, byte for byte, with the stored JSON text spliced in (no parse, no stringify). */
export function claimedBody(d: Pick<ClaimedDelivery, 'event_id' | 'event_name' | 'payload_text' | 'payload_timestamp' | 'created_at'>): string {
  const createdAt = d.payload_timestamp ?? d.created_at.toISOString();
  return `{"id":${JSON.stringify(d.event_id)},"type":${JSON.stringify(d.event_name)},"createdAt":${JSON.stringify(createdAt)},"data":${d.payload_text}}`;
}

interface AttemptResult { statusCode: number | null; latencyMs: number; error: string | null; stopped: boolean; retryAfter?: string }

async function post(deps: DeliverDeps, d: ClaimedDelivery, keys: Buffer[], body: Buffer, signal: AbortSignal): Promise<AttemptResult> {
  const headers = signWithKeys(keys, d.event_id, deps.now(), body);
  try {
    const r = await deps.poster.post(d.endpoint_url, body, headers, { timeoutMs: deps.schedule.timeoutMs, signal });
    const ok = r.statusCode >= 200 && r.statusCode < 300;
    return { statusCode: r.statusCode, latencyMs: r.latencyMs, error: ok ? null : `HTTP ${r.statusCode}`, stopped: false, ...(r.retryAfter !== undefined ? { retryAfter: r.retryAfter } : {}) };
  } catch (err) {
    if (!(err instanceof PostError)) throw err;
    return { statusCode: null, latencyMs: err.latencyMs, error: err.message, stopped: err.kind === 'aborted' };
  }
}

const finalState = (deps: DeliverDeps, round: number): NextState => {
  const next = afterFailedRound(deps.schedule, round);
  return next.status === 'dead' ? { kind: 'dead' } : { kind: 'pending', round: next.round, delayMs: next.delayMs };
};

/**
 * `stop` ends waiting (quick retry delays) and starting attempts: the lease is given back.
 * `abort` also cuts an attempt in flight; a graceful stop sends it only after a grace period.
 */
export interface StopSignals { stop: AbortSignal; abort: AbortSignal }

/** Thrown when the database fails while recording: the lease runs out and another claim retries. */
class RecordFailed extends Error {}

/** `posted`: the POST succeeded and only its record remains (the worker frees the request slot). */
export interface DeliveryHooks { posted?(): void }

export async function deliver(deps: DeliverDeps, d: ClaimedDelivery, signals: StopSignals, hooks: DeliveryHooks = {}): Promise<DeliveryOutcome> {
  const signal = signals.stop;
  const delays = quickDelays(deps.schedule, d.round);
  // encoded once: signed and sent as bytes on every attempt
  const body = d.body ?? Buffer.from(claimedBody(d));
  const holder = deps.worker;
  let attempt = d.attempts;

  // A fan-out's delivery (./fanouts.ts) has no row yet: its first record writes it.
  const record = async (r: AttemptResult, attemptedAt: Date, next: NextState): Promise<RecordOutcome> => {
    attempt += 1;
    const fanout = d.fanout;
    const first = fanout ? { createdAt: d.created_at } as { createdAt: Date; id?: string } : undefined;
    try {
      const outcome = await deps.record({
        deliveryId: d.id, webhookId: d.webhook_id, eventId: d.event_id, eventName: d.event_name, attempt, attemptedAt,
        statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error, success: r.error === null, ...(first ? { first } : {}),
      }, next, holder);
      if (fanout) {
        if (first?.id !== undefined) d.id = first.id;
        delete d.fanout;
        fanout.settle(true);
      }
      return outcome;
    } catch (err) {
      if (fanout) {
        delete d.fanout;
        fanout.settle(false); // the fan-out stays: expanded once its lease ends
      }
      throw new RecordFailed((err as Error).message);
    }
  };
  /** Hands the delivery back without an attempt, due in `delayMs`. */
  const handBack = async (delayMs: number): Promise<void> => {
    const fanout = d.fanout;
    if (!fanout) {
      await giveBack(deps.db, holder, d.id, delayMs);
      return;
    }
    delete d.fanout;
    try {
      await handToClaim(deps.db, [d], delayMs);
      fanout.settle(true);
    } catch (err) {
      fanout.settle(false);
      throw err;
    }
  };

  let keys: Buffer[];
  try {
    keys = deps.keysOf(d);
  } catch (err) {
    deps.logger.error({ webhookId: d.webhook_id, err: (err as Error).message }, 'webhook secret unavailable; delivery not sent');
    const next = finalState(deps, d.round);
    const held = await record({ statusCode: null, latencyMs: 0, error: `not sent: ${(err as Error).message}`, stopped: false }, new Date(deps.now()), next)
      .catch(() => 'lost' as const);
    return held === 'held' ? (next.kind === 'dead' ? 'dead' : 'rescheduled') : held;
  }

  try {
    for (let i = 0; ; i += 1) {
      if (signal.aborted) throw signal.reason;
      if (d.rate_limit_per_second !== null) {
        // the lease holds one attempt plus its margin: wait only within half the margin
        const slot = await deps.limiter.reserve(d.webhook_id, d.rate_limit_per_second, leaseMarginMs(deps.schedule) / 2);
        if ('laterMs' in slot) {
          await handBack(slot.laterMs);
          return 'deferred';
        }
        if (slot.waitMs > 0) await sleep(slot.waitMs, undefined, { signal });
      }
      const attemptedAt = new Date(deps.now());
      const r = await post(deps, d, keys, body, signals.abort);
      if (r.error === null) {
        hooks.posted?.();
        const held = await record(r, attemptedAt, { kind: 'delivered' });
        if (d.failing) await noteSuccess(deps.db, d.webhook_id).catch(() => undefined);
        return held === 'held' ? 'delivered' : held;
      }
      if (r.stopped) {
        const held = await record(r, attemptedAt, { kind: 'pending', round: d.round, delayMs: 0 });
        return held === 'held' ? 'stopped' : held;
      }
      if (r.statusCode === 410) {
        // disabled first: the delivery, pending again, must not be claimed meanwhile
        await disableEndpoint(deps.db, d.webhook_id, 'the endpoint answered 410 Gone', new Date(deps.now()));
        const held = await record(r, attemptedAt, { kind: 'pending', round: d.round, delayMs: 0 });
        return held === 'held' ? 'disabled' : held;
      }
      const pauseMs = asksForPause(r.statusCode) ? retryAfterMs(r.retryAfter, deps.now(), deps.retryAfterMaxMs) : undefined;
      const delay = delays[i];
      const next: NextState = pauseMs !== undefined ? { kind: 'pending', round: d.round, delayMs: pauseMs }
        : delay !== undefined ? { kind: 'retry', leaseMs: retryLeaseMs(deps.schedule, delay) }
          : finalState(deps, d.round);
      if (pauseMs !== undefined) await pauseEndpoint(deps.db, d.webhook_id, pauseMs);
      const held = await record(r, attemptedAt, next);
      const { disabled } = await noteFailure(deps.db, d.webhook_id, attemptedAt);
      if (held !== 'held') return held;
      if (disabled) return 'disabled';
      if (next.kind === 'dead') return 'dead';
      if (next.kind === 'pending') return 'rescheduled';
      await sleep(delay ?? 0, undefined, { signal });
    }
  } catch (err) {
    if (signal.aborted) {
      await (d.fanout ? handBack(0) : releaseLeases(deps.db, holder, [d.id])).catch(() => undefined);
      return 'stopped';
    }
    // The database failed: the lease runs out and another claim retries it.
    deps.logger.warn({ deliveryId: d.id, err: (err as Error).message }, 'delivery interrupted; it will be taken again when its lease ends');
    return 'lost';
  }
}
