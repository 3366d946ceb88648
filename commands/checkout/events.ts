/**
 * `checkout.session.completed` and `checkout.session.expired`, as the service's other own
 * events are announced (commands/x402/exact/settled-event.ts): in the same Postgres
 * transaction as the session's change of status, one service_events row per session and
 * event (its key) and a row in the webhook outbox for every active webhook of the gateway
 * (the workers sign and deliver them); after commit, a `lifecycle` message to the Socket.IO
 * room of the session's trackingId.
 *
 * The body a webhook receives: `{id, type, createdAt, data}` with `data`
 *   completed: {event, sessionId, trackingId, gateway, payer, policy, transaction, amount, tokenMint, timestamp}
 *   expired:   {event, sessionId, trackingId, gateway, expiresAt, timestamp}
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../infra/postgres/schema.js';
import type { Db } from '../../infra/postgres/database.js';
import { OUTBOX_CHANNEL } from '../../src/kernel/names/index.js';
import type { RoomEmitter } from '../scheduler/lifecycle-events.js';
import { storedOf, type SessionRow } from './store.js';

export const CHECKOUT_COMPLETED = 'checkout.session.completed';
export const CHECKOUT_EXPIRED = 'checkout.session.expired';
export type CheckoutEventName = typeof CHECKOUT_COMPLETED | typeof CHECKOUT_EXPIRED;

export interface CheckoutEvent { name: CheckoutEventName; gateway: string; policy: string; trackingId: string; data: Record<string, unknown> }

/** The service_events row and its outbox rows; false when this session's event was recorded already. */
async function record(trx: Transaction<Database>, sessionId: string, e: CheckoutEvent): Promise<boolean> {
  const payload = JSON.stringify(e.data);
  const ev = await trx.insertInto('service_events')
    .values({ event_key: `${e.name}:${sessionId}`, name: e.name, gateway: e.gateway, policy: e.policy, tracking_id: e.trackingId, payload })
    .onConflict((oc) => oc.column('event_key').doNothing())
    .returning('id').executeTakeFirst();
  if (!ev) return false;
  const hooks = await trx.selectFrom('webhooks').select('id').where('active', '=', true)
    .where((eb) => eb.or([eb('gateway_pubkey', '=', e.gateway), eb('gateway_account', '=', e.gateway)]))
    .execute();
  if (hooks.length > 0) {
    await trx.insertInto('webhook_deliveries')
      .values(hooks.map((h) => ({ webhook_id: h.id, event_id: `svc-${ev.id}`, event_name: e.name, payload })))
      .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
      .execute();
    await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
  }
  return true;
}

/**
 * The event to its trackingId's room, without the session's id: anyone may join a trackingId's room
 * (it carries what the chain shows), and the id is the session's capability (its public view shows
 * the merchant's successUrl, an order token in it perhaps). Webhooks and the merchant's own reads
 * carry it.
 */
function emit(rooms: RoomEmitter | undefined, e: CheckoutEvent): void {
  if (!rooms || e.trackingId === '') return;
  const { sessionId: _capability, ...open } = e.data;
  rooms.emit(e.trackingId, 'lifecycle', { type: e.name, data: open });
}

export interface CompletedFacts { payer: string; policy: string; transaction: string | null }

/**
 * paying → complete with what was paid, announced once; false when the row was not paying
 * (nothing is written then).
 */
export async function completeSession(
  deps: { db: Db; rooms?: RoomEmitter | undefined }, row: SessionRow, f: CompletedFacts, now: Date,
): Promise<boolean> {
  const input = storedOf(row).input;
  const e: CheckoutEvent = {
    name: CHECKOUT_COMPLETED, gateway: row.gateway, policy: f.policy, trackingId: row.tracking_id,
    data: {
      event: CHECKOUT_COMPLETED, sessionId: row.id, trackingId: row.tracking_id, gateway: row.gateway, payer: f.payer, policy: f.policy,
      transaction: f.transaction, amount: String(input.amount), tokenMint: input.tokenMint, timestamp: now.getTime(),
    },
  };
  const done = await deps.db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('checkout_sessions')
      .set({ status: 'complete', completed_at: now, updated_at: now, payer: f.payer, policy: f.policy, transaction: f.transaction })
      .where('id', '=', row.id).where('status', '=', 'paying')
      .returning('id').executeTakeFirst();
    if (!updated) return false;
    await record(trx, row.id, e);
    return true;
  });
  if (done) emit(deps.rooms, e);
  return done;
}

/**
 * Expires up to `limit` open sessions past their expiry, each announced once: the rows are
 * taken FOR UPDATE SKIP LOCKED, so sweeps on many nodes share the work and never take one
 * session twice. The number expired.
 */
export async function expireDue(deps: { db: Db; rooms?: RoomEmitter | undefined }, now: Date, limit = 200): Promise<number> {
  const events = await deps.db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('checkout_sessions').select(['id', 'gateway', 'tracking_id', 'expires_at'])
      .where('status', '=', 'open').where('expires_at', '<=', now)
      .orderBy('expires_at').limit(limit).forUpdate().skipLocked().execute();
    if (rows.length === 0) return [];
    await trx.updateTable('checkout_sessions').set({ status: 'expired', updated_at: now })
      .where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'open').execute();
    const out: CheckoutEvent[] = [];
    for (const r of rows) {
      const e: CheckoutEvent = {
        name: CHECKOUT_EXPIRED, gateway: r.gateway, policy: '', trackingId: r.tracking_id,
        data: { event: CHECKOUT_EXPIRED, sessionId: r.id, trackingId: r.tracking_id, gateway: r.gateway, expiresAt: r.expires_at.toISOString(), timestamp: now.getTime() },
      };
      if (await record(trx, r.id, e)) out.push(e);
    }
    return out;
  });
  for (const e of events) emit(deps.rooms, e);
  return events.length;
}
