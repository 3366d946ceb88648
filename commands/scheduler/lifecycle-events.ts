/**
 * Lifecycle events of the service's own (payment.upcoming, payment.failed,
 * subscription.past_due, subscription.recovered, subscription.canceled): kept once per
 * key in service_events, and in the same transaction put in the webhook outbox for every
 * active webhook of the gateway (delivered and signed like the chain's events by the
 * webhook workers), then broadcast to the trackingId's Socket.IO room as `lifecycle`.
 *
 * The body a webhook receives: `{id, type, createdAt, data}` where `data` is
 *   {event, policy, gateway, trackingId, dueAt, timestamp, ...details}
 * (README, "Scheduler and billing", has an example of each).
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { OUTBOX_CHANNEL } from '../../src/kernel/names/index.js';
import type { LifecycleEventName } from './decide.js';

export interface LifecycleEvent {
  name: LifecycleEventName;
  /** one event per key: the same step retried never announces twice */
  key: string;
  gateway: string;
  policy: string;
  trackingId: string;
  dueAt: number | null;
  details: Record<string, string | number | boolean | null>;
}

/** Where the broadcast goes; the scheduler role passes a Socket.IO server on the Redis adapter. */
export interface RoomEmitter { emit(trackingId: string, event: string, body: unknown): void }

export interface LifecycleDeps {
  db: Db;
  nowMs: () => number;
  rooms?: RoomEmitter;
  /**
   * After an event is recorded: the scheduler role bumps the read-cache version
   * LIFECYCLE_VERSION (cached merchant answers show past-due flags). A failure leaves
   * those answers at most READ_CACHE_TTL_MS old.
   */
  recorded?: () => Promise<unknown>;
}

export function eventData(e: LifecycleEvent, nowMs: number): Record<string, unknown> {
  return {
    event: e.name, policy: e.policy, gateway: e.gateway, trackingId: e.trackingId, dueAt: e.dueAt, timestamp: nowMs, ...e.details,
  };
}

/** Records and delivers the event; false when its key was announced already. */
export async function announce(deps: LifecycleDeps, e: LifecycleEvent): Promise<boolean> {
  const now = deps.nowMs();
  const data = eventData(e, now);
  const payload = JSON.stringify(data);
  const inserted = await deps.db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('service_events')
      .values({ event_key: e.key, name: e.name, gateway: e.gateway, policy: e.policy, tracking_id: e.trackingId, payload })
      .onConflict((oc) => oc.column('event_key').doNothing())
      .returning('id').executeTakeFirst();
    if (!row) return false;
    const hooks = await trx.selectFrom('webhooks').select('id').where('active', '=', true)
      .where((eb) => eb.or([eb('gateway_pubkey', '=', e.gateway), eb('gateway_account', '=', e.gateway)]))
      .execute();
    if (hooks.length > 0) {
      await trx.insertInto('webhook_deliveries')
        .values(hooks.map((h) => ({ webhook_id: h.id, event_id: `svc-${row.id}`, event_name: e.name, payload })))
        .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
        .execute();
      await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
    }
    return true;
  });
  if (inserted) await deps.recorded?.().catch(() => undefined);
  if (inserted && deps.rooms && e.trackingId !== '') deps.rooms.emit(e.trackingId, 'lifecycle', { type: e.name, data });
  return inserted;
}

/**
 * Records and delivers many events in one statement: the service_events rows (each key
 * once; a key announced before is skipped) and every delivery of them to the gateways'
 * active webhooks as one multi-row outbox insert. The keys newly announced are returned.
 */
export async function announceMany(deps: LifecycleDeps, events: readonly LifecycleEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const now = deps.nowMs();
  const payloads = events.map((e) => JSON.stringify(eventData(e, now)));
  const r = await sql<{ event_key: string; deliveries: string }>`
    WITH ev AS (
      INSERT INTO service_events (event_key, name, gateway, policy, tracking_id, payload)
      SELECT k, n, g, p, t, pl::json
      FROM unnest(${events.map((e) => e.key)}::text[], ${events.map((e) => e.name)}::text[], ${events.map((e) => e.gateway)}::text[],
                  ${events.map((e) => e.policy)}::text[], ${events.map((e) => e.trackingId)}::text[], ${payloads}::text[]) AS v(k, n, g, p, t, pl)
      ON CONFLICT (event_key) DO NOTHING
      RETURNING id, event_key, name, gateway, payload
    ), d AS (
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload)
      SELECT w.id, 'svc-' || ev.id, ev.name, ev.payload
      FROM ev JOIN webhooks w ON w.active AND (w.gateway_pubkey = ev.gateway OR w.gateway_account = ev.gateway)
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING 1
    )
    SELECT ev.event_key, (SELECT count(*) FROM d)::text AS deliveries FROM ev`.execute(deps.db);
  if (Number(r.rows[0]?.deliveries ?? 0) > 0) await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(deps.db);
  const announced = new Set(r.rows.map((x) => x.event_key));
  if (announced.size > 0) await deps.recorded?.().catch(() => undefined);
  events.forEach((e, k) => {
    if (!announced.has(e.key) || !deps.rooms || e.trackingId === '') return;
    deps.rooms.emit(e.trackingId, 'lifecycle', { type: e.name, data: JSON.parse(payloads[k]!) as unknown });
  });
  return [...announced];
}
