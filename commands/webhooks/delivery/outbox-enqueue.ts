/**
 * Writing an event of the service's own into the webhook outbox (lifecycle events of the
 * scheduler, notices such as webhook.disabled): one row per active webhook of the gateway,
 * in the caller's transaction, and a NOTIFY that wakes the workers at commit. The
 * endpoints' event_types filter applies on insert (the outbox trigger), so callers need not
 * know who subscribed to what. `type` should be one of ./event-types.ts.
 *
 * A gateway's webhooks are those registered under its account or its authority, as the
 * webhooks projection matches them: pass every key that names the gateway.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { OUTBOX_CHANNEL } from '../../../src/kernel/names/index.js';

export interface OutboxEvent {
  /** keys naming the gateway: its account, and its authority when known */
  gateway: readonly string[];
  /** unique per event (a webhook gets an event id once: the row is skipped if it exists) */
  eventId: string;
  type: string;
  /** the body's `data`; a string `timestamp` in it becomes the body's createdAt */
  data: unknown;
  /** a webhook to leave out (the one a notice is about) */
  exceptWebhookId?: number;
}

/** Queues the event for the gateway's active webhooks; the number of deliveries queued. */
export async function enqueueOutboxEvent(db: Db, e: OutboxEvent): Promise<number> {
  if (e.gateway.length === 0) return 0;
  const keys = [...e.gateway];
  const r = await sql`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload)
    SELECT id, ${e.eventId}, ${e.type}, ${JSON.stringify(e.data)}::json
    FROM webhooks
    WHERE (gateway_pubkey = ANY (${keys}::text[]) OR gateway_account = ANY (${keys}::text[]))
      AND active AND id <> ${e.exceptWebhookId ?? 0}
    ON CONFLICT (webhook_id, event_id) DO NOTHING`.execute(db);
  const n = Number(r.numAffectedRows ?? 0);
  if (n > 0) await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(db);
  return n;
}
