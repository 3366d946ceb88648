/**
 * One claimed delivery: signed POSTs with the quick retries (p-retry), every attempt
 * recorded as it ends, then the delivery delivered, rescheduled on the slow schedule, or
 * dead. The webhook-id is the event's identity on every attempt, whichever worker makes it.
 *
 * Body (JSON): {id, type, createdAt, data} = the event identity, the event name, the
 * event's block time (ISO 8601; when the cluster gave none, the time the delivery was
 * queued), and the event as GET /v1/events returns it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import { PostError, type JsonPoster } from '../../infra/http/post-json.js';
import { openSecret } from '../../infra/crypto/secret-box.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';
import { signedHeaders } from './signer.js';
import { afterFailedRound, quickDelays, retryLeaseMs, type ScheduleConfig } from './schedule.js';
import { releaseLeases, type ClaimedDelivery, type NextState, type RecordOutcome } from './outbox-store.js';
import type { RecordFn } from './attempt-recorder.js';

export interface DeliverDeps {
  db: Db;
  worker: string;
  /** records an attempt and moves the delivery on (createAttemptRecorder) */
  record: RecordFn;
  poster: JsonPoster;
  schedule: ScheduleConfig;
  encryptionKey: Buffer | undefined;
  now: () => number;
  logger: Logger;
}

export type DeliveryOutcome = 'delivered' | 'rescheduled' | 'dead' | 'lost' | 'gone' | 'stopped';

export function deliveryBody(d: Pick<ClaimedDelivery, 'event_id' | 'event_name' | 'payload' | 'created_at'>): string {
  const data = d.payload as { timestamp?: unknown };
  const createdAt = typeof data.timestamp === 'string' ? data.timestamp : d.created_at.toISOString();
  return JSON.stringify({ id: d.event_id, type: d.event_name, createdAt, data: d.payload });
}

/** An attempt that failed while quick retries remain: p-retry tries again. */
class AttemptFailed extends Error {}

interface AttemptResult { statusCode: number | null; latencyMs: number; error: string | null; stopped: boolean }

async function post(deps: DeliverDeps, d: ClaimedDelivery, secret: string, body: string, signal: AbortSignal): Promise<AttemptResult> {
  const headers = signedHeaders(secret, d.event_id, deps.now(), body);
  try {
    const r = await deps.poster.post(d.endpoint_url, body, { ...headers }, { timeoutMs: deps.schedule.timeoutMs, signal });
    const ok = r.statusCode >= 200 && r.statusCode < 300;
    return { statusCode: r.statusCode, latencyMs: r.latencyMs, error: ok ? null : `HTTP ${r.statusCode}`, stopped: false };
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

export async function deliver(deps: DeliverDeps, d: ClaimedDelivery, signals: StopSignals): Promise<DeliveryOutcome> {
  const signal = signals.stop;
  const delays = quickDelays(deps.schedule, d.round);
  const body = deliveryBody(d);
  let attempt = d.attempts;
  let outcome: DeliveryOutcome = 'stopped';

  const record = async (r: AttemptResult, attemptedAt: Date, next: NextState): Promise<RecordOutcome> => {
    attempt += 1;
    try {
      return await deps.record({
        deliveryId: d.id, webhookId: d.webhook_id, eventId: d.event_id, eventName: d.event_name, attempt, attemptedAt,
        statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error, success: r.error === null,
      }, next);
    } catch (err) {
      // The database failed us: stop here; the lease runs out and the delivery is taken again.
      throw new AbortError(err as Error);
    }
  };

  let secret: string;
  try {
    secret = openSecret(d.secret, secretAad(d.webhook_id), deps.encryptionKey);
  } catch (err) {
    deps.logger.error({ webhookId: d.webhook_id, err: (err as Error).message }, 'webhook secret unavailable; delivery not sent');
    const next = finalState(deps, d.round);
    const held = await record({ statusCode: null, latencyMs: 0, error: `not sent: ${(err as Error).message}`, stopped: false }, new Date(deps.now()), next);
    return held === 'held' ? (next.kind === 'dead' ? 'dead' : 'rescheduled') : held;
  }

  try {
    await pRetry(async (attemptNumber: number) => {
      const attemptedAt = new Date(deps.now());
      const r = await post(deps, d, secret, body, signals.abort);
      const delay = delays[attemptNumber - 1];
      const next: NextState = r.error === null ? { kind: 'delivered' }
        : r.stopped ? { kind: 'pending', round: d.round, delayMs: 0 }
          : delay !== undefined ? { kind: 'retry', leaseMs: retryLeaseMs(deps.schedule, delay) }
            : finalState(deps, d.round);
      const held = await record(r, attemptedAt, next);
      if (held !== 'held') { outcome = held; return; }
      switch (next.kind) {
        case 'delivered': outcome = 'delivered'; return;
        case 'retry': throw new AttemptFailed(r.error ?? 'failed');
        case 'dead': outcome = 'dead'; return;
        case 'pending': outcome = r.stopped ? 'stopped' : 'rescheduled'; return;
      }
    }, {
      retries: delays.length,
      minTimeout: 0,
      maxTimeout: 0,
      factor: 1,
      randomize: false,
      signal,
      // SPEC's delays are 1 s, 2 s, 3 s: linear, which p-retry's exponential backoff cannot
      // express, so the wait happens here (p-retry awaits it before the next attempt).
      onFailedAttempt: async ({ attemptNumber, retriesLeft }) => {
        if (retriesLeft > 0) await sleep(delays[attemptNumber - 1] ?? 0, undefined, { signal });
      },
    });
  } catch (err) {
    if (signal.aborted) {
      await releaseLeases(deps.db, deps.worker, [d.id]).catch(() => undefined);
      return 'stopped';
    }
    // The database failed while recording: the lease runs out and another claim retries it.
    deps.logger.warn({ deliveryId: d.id, err: (err as Error).message }, 'delivery interrupted; it will be taken again when its lease ends');
    return 'lost';
  }
  return outcome;
}
