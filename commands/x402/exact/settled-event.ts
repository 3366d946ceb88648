/**
 * `x402.payment.settled`: an `exact` payment becomes an event of the service's own, as the
 * scheduler's lifecycle events are (commands/scheduler/lifecycle-events.ts): one
 * service_events row per transaction, put in the same Postgres transaction as the ledger's
 * `settled` state and in the webhook outbox of every active webhook of the gateway (the
 * workers sign and deliver it), then broadcast to the Socket.IO room of the payment's memo
 * (its trackingId; a memo longer than a trackingId's 64 bytes reaches webhooks only).
 *
 * The body a webhook receives: `{id, type: 'x402.payment.settled', createdAt, data}` where
 * `data` is {event, gateway, payer, amount, asset, payTo, resource, memo, transaction,
 * network, timestamp}.
 */
import { sql } from 'kysely';
import type { SettleResponse } from '@x402/core/types';
import type { Db } from '../../../infra/postgres/database.js';
import { OUTBOX_CHANNEL } from '../../../src/kernel/names/index.js';
import type { RoomEmitter } from '../../scheduler/lifecycle-events.js';
import type { SettlementFacts } from './settlements.js';

export const EXACT_SETTLED_EVENT = 'x402.payment.settled';

export function settledEventData(f: SettlementFacts, transaction: string, nowMs: number): Record<string, unknown> {
  return {
    event: EXACT_SETTLED_EVENT, gateway: f.gateway, payer: f.payer, amount: f.amount, asset: f.asset, payTo: f.payTo,
    resource: f.resource, memo: f.memo, transaction, network: f.network, timestamp: nowMs,
  };
}

/**
 * Marks the row settled with its answer and announces the payment, once: false when the
 * row was settled already (a duplicate), and then nothing is announced again.
 */
export async function recordSettled(
  deps: { db: Db; rooms?: RoomEmitter | undefined }, f: SettlementFacts, answer: SettleResponse, nowMs: number,
): Promise<boolean> {
  const data = settledEventData(f, answer.transaction, nowMs);
  const payload = JSON.stringify(data);
  const done = await deps.db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('x402_exact_settlements')
      .set({ state: 'settled', signature: answer.transaction, payer: f.payer, answer: JSON.stringify(answer), settled_at: new Date(nowMs) })
      .where('message_hash', '=', f.messageHash).where('state', '!=', 'settled')
      .returning('message_hash').executeTakeFirst();
    if (!row) return false;
    const ev = await trx.insertInto('service_events')
      .values({ event_key: `x402.exact:${answer.transaction}`, name: EXACT_SETTLED_EVENT, gateway: f.gateway, policy: '', tracking_id: f.memo ?? '', payload })
      .onConflict((oc) => oc.column('event_key').doNothing())
      .returning('id').executeTakeFirst();
    if (!ev) return true;
    const hooks = await trx.selectFrom('webhooks').select('id').where('active', '=', true)
      .where((eb) => eb.or([eb('gateway_pubkey', '=', f.gateway), eb('gateway_account', '=', f.gateway)]))
      .execute();
    if (hooks.length > 0) {
      await trx.insertInto('webhook_deliveries')
        .values(hooks.map((h) => ({ webhook_id: h.id, event_id: `svc-${ev.id}`, event_name: EXACT_SETTLED_EVENT, payload })))
        .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
        .execute();
      await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
    }
    return true;
  });
  if (done && deps.rooms && f.memo) deps.rooms.emit(f.memo, 'lifecycle', { type: EXACT_SETTLED_EVENT, data });
  return done;
}
