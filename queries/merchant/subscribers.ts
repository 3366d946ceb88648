/**
 * A gateway's subscribers from the merchant read model (projections/merchant): one row
 * per payer wallet and mint, ordered by payer then mint for stable paging.
 *
 * Past due comes from the scheduler's own record at read time: a subscriber is past due
 * while one of its policies' latest subscription lifecycle event in service_events is
 * subscription.past_due (recovered and canceled end it). That record is the scheduler's,
 * kept once per event and not derived from the chain, so it is not folded into the
 * merchant model: the model stays a function of the chain archive that `replay` rebuilds
 * exactly, and the flag is always the scheduler's current word. The table is read through
 * the composed schema type (no import of the scheduler's code).
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { MerchantSubscribersTable } from '../../projections/merchant/tables.js';
import type { Subscriber, SubscriberPage } from '../../src/kernel/wire/answers/merchant.js';

export const SUBSCRIBER_STATUSES = ['active', 'paused', 'ended'] as const;
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

/** the scheduler's lifecycle events that start or end a past-due spell */
export const PAST_DUE_EVENTS = ['subscription.past_due', 'subscription.recovered', 'subscription.canceled'] as const;

export interface SubscriberFilter { status?: SubscriberStatus; tokenMint?: string }

// the answer's shape is the wire module's, which the dashboard page reads as well
export type { Subscriber, SubscriberPage } from '../../src/kernel/wire/answers/merchant.js';

const num = (v: string | null): number | null => (v === null ? null : Number(v));

/** A subscriber row with the past-due flag read from the scheduler's events (pastDue below). */
export type SubscriberRow = Selectable<MerchantSubscribersTable> & { past_due: boolean };

export function toSubscriber(r: SubscriberRow): Subscriber {
  return {
    payer: r.payer, tokenMint: r.token_mint, status: r.status, policies: r.policies, activePolicies: r.active_policies,
    totalPaid: r.total_paid, payments: Number(r.payments), firstPaymentAt: num(r.first_payment_at),
    lastPaymentAt: num(r.last_payment_at), nextDue: num(r.next_due), pastDue: r.past_due,
  };
}

export function subscribersQuery(db: Db, gateway: string, f: SubscriberFilter) {
  let q = db.selectFrom('merchant_subscribers as s').where('s.gateway', '=', gateway);
  if (f.status !== undefined) q = q.where('s.status', '=', f.status);
  if (f.tokenMint !== undefined) q = q.where('s.token_mint', '=', f.tokenMint);
  return q;
}

/** Whether any of the subscriber's policies is past due: its latest lifecycle event (index policy, id). */
const pastDue = sql<boolean>`EXISTS (
  SELECT 1 FROM unnest(s.policies) AS p(address)
  CROSS JOIN LATERAL (
    SELECT e.name FROM service_events e WHERE e.policy = p.address AND e.name IN (${sql.join(PAST_DUE_EVENTS)})
    ORDER BY e.id DESC LIMIT 1
  ) latest
  WHERE latest.name = 'subscription.past_due')`;

/** The subscriber columns with the scheduler's past-due flag, in paging order. */
export function subscriberRows(q: ReturnType<typeof subscribersQuery>) {
  return q.select(['s.gateway', 's.token_mint', 's.payer', 's.policies', 's.active_policies', 's.status', 's.total_paid', 's.payments',
    's.first_payment_at', 's.last_payment_at', 's.next_due', pastDue.as('past_due')])
    .orderBy('s.payer').orderBy('s.token_mint');
}

export async function listSubscribers(db: Db, gateway: string, f: SubscriberFilter & { limit: number; offset: number }): Promise<SubscriberPage> {
  const q = subscribersQuery(db, gateway, f);
  const [rows, count] = await Promise.all([
    subscriberRows(q).limit(f.limit).offset(f.offset).execute(),
    q.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toSubscriber), total: Number(count.n) };
}
