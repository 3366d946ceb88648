/**
 * The merchant's tools over a webhook: rotate its secret, resend one delivery,
 * recover what failed since a time, send a test event. Authorization as every webhook
 * route (service.ts getWebhook): 404 for an unknown webhook, 403 for another gateway's.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { conflict, invalid, notFound } from '../../src/kernel/http/errors.js';
import type { RequestAuth } from '../../src/kernel/auth/gateway-token.js';
import { newSigningSecret, signedHeaders } from './delivery/signer.js';
import { deliveryBody } from './delivery/deliver.js';
import { recordAttempt } from './delivery/outbox-store.js';
import { WEBHOOK_TEST } from './delivery/event-types.js';
import { openSecret, sealSecret } from '../../infra/crypto/secret-box.js';
import { createJsonPoster, PostError, type PostResult } from '../../infra/http/post-json.js';
import type { RateLimit } from '../../infra/http/redis-rate-limit.js';
import { secretAad } from './secret-aad.js';
import { getWebhook, type WebhookDeps } from './service.js';

export interface ToolDeps extends WebhookDeps {
  secretGraceSeconds: number;
  timeoutMs: number;
  userAgent: string;
  /** the test tool's budget, counted per gateway */
  testLimit: Pick<RateLimit, 'count'>;
}

export interface RotatedSecret { id: number; secret: string; previous_secret_expires_at: string }

/** A new secret, answered this once; the previous one keeps signing for the grace period. */
export async function rotateSecret(deps: ToolDeps, auth: RequestAuth, id: number): Promise<RotatedSecret> {
  await getWebhook(deps, auth, id);
  const secret = newSigningSecret();
  const now = deps.now();
  const until = new Date(now + deps.secretGraceSeconds * 1000);
  const r = await sql<{ id: number }>`
    UPDATE webhooks SET previous_secret = secret, previous_secret_until = ${until},
      secret = ${sealSecret(secret, secretAad(id), deps.encryptionKey)}, updated_at = ${new Date(now)}
    WHERE id = ${id} RETURNING id`.execute(deps.db);
  if (r.rows.length === 0) throw notFound(`webhook ${id} not found`);
  return { id, secret, previous_secret_expires_at: until.toISOString() };
}

export interface ResendResult { deliveryId: string; status: 'pending' }

/** Queues one delivery of this webhook again, now, with its full retry schedule. */
export async function resendDelivery(deps: ToolDeps, auth: RequestAuth, id: number, deliveryId: string): Promise<ResendResult> {
  await getWebhook(deps, auth, id);
  const { rows } = await sql<{ id: string; status: string; held: boolean }>`
    SELECT id, status, (status = 'pending' AND locked_until IS NOT NULL AND locked_until >= now()) AS held
    FROM webhook_deliveries WHERE id = ${deliveryId} AND webhook_id = ${id}`.execute(deps.db);
  const d = rows[0];
  if (!d) throw notFound(`webhook ${id} has no delivery ${deliveryId}`);
  if (d.held) throw conflict(`delivery ${deliveryId} is being attempted right now`);
  const r = await sql`
    UPDATE webhook_deliveries SET status = 'pending', round = 0, next_attempt_at = now(), finished_at = NULL, locked_until = NULL, locked_by = NULL
    WHERE id = ${deliveryId} AND webhook_id = ${id} AND NOT (status = 'pending' AND locked_until IS NOT NULL AND locked_until >= now())`.execute(deps.db);
  if (Number(r.numAffectedRows ?? 0) === 0) throw conflict(`delivery ${deliveryId} is being attempted right now`);
  return { deliveryId, status: 'pending' };
}

/**
 * Queues again every delivery of this webhook created since `since` that is dead, or
 * pending after a failed attempt (and not being attempted): due now, full retry schedule.
 */
export async function recoverDeliveries(deps: ToolDeps, auth: RequestAuth, id: number, since: Date): Promise<{ recovered: number }> {
  // the schema's date-time admits what Date cannot hold (a leap second, year 0)
  if (Number.isNaN(since.getTime())) throw invalid('since is not a time this service can read');
  await getWebhook(deps, auth, id);
  const r = await sql`
    UPDATE webhook_deliveries SET status = 'pending', round = 0, next_attempt_at = now(), finished_at = NULL, locked_until = NULL, locked_by = NULL
    WHERE webhook_id = ${id} AND created_at >= ${since}
      AND (status = 'dead' OR (status = 'pending' AND attempts > 0 AND (locked_until IS NULL OR locked_until < now())))`.execute(deps.db);
  return { recovered: Number(r.numAffectedRows ?? 0) };
}

/**
 * What a test send may tell: the receiver took it (2xx), the receiver answered otherwise
 * (its status), or nothing answered. Every network error (refused, reset, hung up, timed
 * out, no such host, a TLS failure, a target the SSRF guard refuses) is the one
 * `unreachable`, with no error code and no latency: with private targets allowed, telling
 * them apart (or timing them) would make the tool a port scanner of the service's network.
 */
export type TestOutcome = 'delivered' | 'refused' | 'unreachable';
export const UNREACHABLE = 'the endpoint could not be reached';

export interface TestResult {
  deliveryId: string; eventId: string; outcome: TestOutcome; success: boolean; statusCode: number | null; latencyMs: number | null; error: string | null;
}

/** An HTTP answer's outcome, its latency in whole milliseconds (an HTTP server answered: its time is the receiver's, for the merchant's debugging). */
const answered = (r: PostResult) => (r.statusCode >= 200 && r.statusCode < 300
  ? { outcome: 'delivered' as const, statusCode: r.statusCode, latencyMs: Math.round(r.latencyMs), error: null }
  : { outcome: 'refused' as const, statusCode: r.statusCode, latencyMs: Math.round(r.latencyMs), error: `HTTP ${r.statusCode}` });
const unreachable = { outcome: 'unreachable' as const, statusCode: null, latencyMs: null, error: UNREACHABLE };

/**
 * Sends a signed webhook.test event at once, from this node, and answers the attempt's
 * classified outcome (TestOutcome). The delivery and its one attempt are recorded like any
 * other, with the same classified error (it is not retried). Counted against the gateway's
 * budget (RATE_LIMIT_WEBHOOK_TEST_PER_MINUTE) once the caller may act for it: 429 past it.
 */
export async function sendTest(deps: ToolDeps, auth: RequestAuth, id: number): Promise<TestResult> {
  const w = await getWebhook(deps, auth, id);
  const { refusal } = await deps.testLimit.count(w.gateway_pubkey);
  if (refusal) throw refusal;
  const now = deps.now();
  const eventId = `${WEBHOOK_TEST}:${id}:${now}:${randomBytes(3).toString('hex')}`;
  const payload = { webhookId: id, message: 'a test event from Tributary' };
  const lock = `test:${eventId}`;
  const { rows } = await sql<{ id: string; created_at: Date; secret: string; previous_secret: string | null; previous_secret_until: Date | null }>`
    WITH d AS (
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload, locked_until, locked_by)
      VALUES (${id}, ${eventId}, ${WEBHOOK_TEST}, ${JSON.stringify(payload)}::json, now() + ${deps.timeoutMs * 2} * interval '1 millisecond', ${lock})
      RETURNING id, created_at, webhook_id)
    SELECT d.id, d.created_at, w.secret, w.previous_secret, w.previous_secret_until FROM d JOIN webhooks w ON w.id = d.webhook_id`.execute(deps.db);
  const row = rows[0];
  if (!row) throw notFound(`webhook ${id} not found`);
  const open = (sealed: string) => openSecret(sealed, secretAad(id), deps.encryptionKey);
  const secrets = [open(row.secret)];
  if (row.previous_secret !== null && row.previous_secret_until !== null && row.previous_secret_until.getTime() > now) secrets.push(open(row.previous_secret));
  const body = deliveryBody({ event_id: eventId, event_name: WEBHOOK_TEST, payload, created_at: row.created_at });
  const poster = createJsonPoster({ allowPrivateTargets: deps.allowPrivateTargets, maxSockets: 1, userAgent: deps.userAgent });
  const attemptedAt = new Date(deps.now());
  let result: ReturnType<typeof answered> | typeof unreachable;
  try {
    result = answered(await poster.post(w.endpoint_url, body, { ...signedHeaders(secrets, eventId, deps.now(), body) }, { timeoutMs: deps.timeoutMs }));
  } catch (err) {
    if (!(err instanceof PostError)) throw err;
    result = unreachable;
  } finally {
    poster.close();
  }
  const success = result.outcome === 'delivered';
  await recordAttempt(deps.db, lock, {
    deliveryId: row.id, webhookId: id, eventId, eventName: WEBHOOK_TEST, attempt: 1, attemptedAt,
    statusCode: result.statusCode, latencyMs: result.latencyMs ?? 0, error: result.error, success,
  }, success ? { kind: 'delivered' } : { kind: 'dead' });
  return { deliveryId: String(row.id), eventId, success, ...result };
}
