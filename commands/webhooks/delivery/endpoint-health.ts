/**
 * What receivers tell us, and what their failures say about them:
 *
 * - 410 Gone: the receiver says the endpoint is no more. It is disabled at once.
 * - 429 / 503 with Retry-After: the endpoint is paused as asked (paused_until, database
 *   clock, so every worker honors it); the delivery waits as long.
 * - A streak of failed attempts with no success between them (application clock, so a
 *   test can move time): once it has lasted FAILING_DISABLE_MS, with at least
 *   MIN_STREAK_SPAN_MS between its first and last failure and MIN_FAILURES failures, the
 *   endpoint is disabled. Any success ends the streak.
 *
 * A disabled endpoint keeps its pending deliveries (they resume if it is activated again)
 * and the gateway's other active endpoints get a `webhook.disabled` event.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { enqueueOutboxEvent } from './outbox-enqueue.js';
import { WEBHOOK_DISABLED } from './event-types.js';

const DAY_MS = 86_400_000;
export const FAILING_DISABLE_MS = 5 * DAY_MS;
export const MIN_STREAK_SPAN_MS = DAY_MS;
export const MIN_FAILURES = 3;

/** Retry-After as delta-seconds or an HTTP date, in ms from `nowMs`, capped; undefined if absent or malformed. */
export function retryAfterMs(header: string | undefined, nowMs: number, capMs: number): number | undefined {
  if (header === undefined) return undefined;
  const v = header.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    // an HTTP date names its day and month ("Wed, 21 Oct 2015 07:28:00 GMT"); Date.parse alone takes "-5" for a year
    if (!/^[A-Za-z]{3}, /.test(v)) return undefined;
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, ms), capMs);
}

/** Whether an answer asks for a pause: 429 or 503 with a usable Retry-After. */
export const asksForPause = (statusCode: number | null): boolean => statusCode === 429 || statusCode === 503;

export async function pauseEndpoint(db: Db, webhookId: number, ms: number): Promise<void> {
  await sql`UPDATE webhooks SET paused_until = GREATEST(COALESCE(paused_until, now()), now() + ${ms} * interval '1 millisecond')
    WHERE id = ${webhookId}`.execute(db);
}

interface Streak { failing_since: Date; last_failure_at: Date; failure_count: number }

export function streakExpired(s: Streak): boolean {
  const first = s.failing_since.getTime();
  const last = s.last_failure_at.getTime();
  return last - first >= FAILING_DISABLE_MS && last - first >= MIN_STREAK_SPAN_MS && s.failure_count >= MIN_FAILURES;
}

/** Counts a failed attempt in the endpoint's streak; disables the endpoint when the streak says so. */
export async function noteFailure(db: Db, webhookId: number, now: Date): Promise<{ disabled: boolean }> {
  const { rows } = await sql<Streak>`
    UPDATE webhooks SET failing_since = COALESCE(failing_since, ${now}), last_failure_at = ${now}, failure_count = failure_count + 1
    WHERE id = ${webhookId} AND active
    RETURNING failing_since, last_failure_at, failure_count`.execute(db);
  const s = rows[0];
  if (!s || !streakExpired(s)) return { disabled: false };
  const reason = `failing since ${s.failing_since.toISOString()}: ${s.failure_count} failed attempts and no success`;
  return { disabled: await disableEndpoint(db, webhookId, reason, now) };
}

/** Ends the endpoint's failure streak (a success). */
export async function noteSuccess(db: Db, webhookId: number): Promise<void> {
  await sql`UPDATE webhooks SET failing_since = NULL, last_failure_at = NULL, failure_count = 0
    WHERE id = ${webhookId} AND failing_since IS NOT NULL`.execute(db);
}

/**
 * Disables an active endpoint with its reason and tells the gateway's other active
 * endpoints, in one transaction; false when it was not active (someone else did it).
 * The gateway's endpoints are those registered under its account or its authority (as
 * the projection matches them): either key of the disabled one names the gateway.
 */
export async function disableEndpoint(db: Db, webhookId: number, reason: string, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ gateway_pubkey: string; gateway_account: string; endpoint_url: string }>`
      UPDATE webhooks SET active = false, disabled_reason = ${reason}, updated_at = ${now}
      WHERE id = ${webhookId} AND active
      RETURNING gateway_pubkey, gateway_account, endpoint_url`.execute(trx);
    const w = rows[0];
    if (!w) return false;
    await enqueueOutboxEvent(trx, {
      gateway: [w.gateway_pubkey, w.gateway_account],
      eventId: `${WEBHOOK_DISABLED}:${webhookId}:${now.getTime()}`,
      type: WEBHOOK_DISABLED,
      data: { webhookId, endpointUrl: w.endpoint_url, disabledReason: reason, disabledAt: now.toISOString() },
      exceptWebhookId: webhookId,
    });
    return true;
  });
}
