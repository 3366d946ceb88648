/**
 * A gateway's subscribers from the merchant read model (projections/merchant): one row
 * per payer wallet and mint, ordered by payer then mint for stable paging.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { MerchantSubscribersTable } from '../../projections/merchant/tables.js';
import type { Selectable } from 'kysely';

export const SUBSCRIBER_STATUSES = ['active', 'paused', 'ended'] as const;
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

export interface SubscriberFilter { status?: SubscriberStatus; tokenMint?: string }

export interface Subscriber {
  payer: string;
  tokenMint: string;
  status: string;
  policies: string[];
  activePolicies: number;
  /** base units, decimal string: what the payer paid in all, fees included */
  totalPaid: string;
  payments: number;
  /** unix seconds, or null */
  firstPaymentAt: number | null;
  lastPaymentAt: number | null;
  nextDue: number | null;
  /** from the scheduler (issue 14) once it lands; false until then */
  pastDue: boolean;
}

const num = (v: string | null): number | null => (v === null ? null : Number(v));

export function toSubscriber(r: Selectable<MerchantSubscribersTable>): Subscriber {
  return {
    payer: r.payer, tokenMint: r.token_mint, status: r.status, policies: r.policies, activePolicies: r.active_policies,
    totalPaid: r.total_paid, payments: Number(r.payments), firstPaymentAt: num(r.first_payment_at),
    lastPaymentAt: num(r.last_payment_at), nextDue: num(r.next_due), pastDue: r.past_due,
  };
}

export function subscribersQuery(db: Db, gateway: string, f: SubscriberFilter) {
  let q = db.selectFrom('merchant_subscribers').where('gateway', '=', gateway);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.tokenMint !== undefined) q = q.where('token_mint', '=', f.tokenMint);
  return q;
}

export async function listSubscribers(db: Db, gateway: string, f: SubscriberFilter & { limit: number; offset: number }): Promise<{ items: Subscriber[]; total: number }> {
  const q = subscribersQuery(db, gateway, f);
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('payer').orderBy('token_mint').limit(f.limit).offset(f.offset).execute(),
    q.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toSubscriber), total: Number(count.n) };
}
