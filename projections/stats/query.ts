/**
 * Count and exact volume of PaymentRecord payments, from the daily stats model: whole
 * UTC days inside the range are read from payment_stats_daily (one row per gateway and
 * day, however many payments), and the partial days at either edge of the range from the
 * payments model, so any range is answered exactly. Times are unix seconds, inclusive,
 * on the payments' block time (the program's clock when a block time is missing), as
 * the events API filters by block time.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../infra/postgres/schema.js';
import { epochDay } from '../../src/kernel/domain/event-data.js';

export interface PaymentStatsFilter {
  gateway?: string;
  /** inclusive lower bound, unix seconds */
  startTime?: number;
  /** inclusive upper bound, unix seconds */
  endTime?: number;
}

export interface PaymentStats {
  count: number;
  /** sum of amounts in the token's base units, as a decimal string */
  volume: string;
}

const DAY = 86_400n;

interface Sum { n: string; v: string }

async function fromDays(db: Kysely<Database>, gateway: string | undefined, first: bigint | null, last: bigint | null): Promise<Sum> {
  let q = db.selectFrom('payment_stats_daily').select([
    sql<string>`coalesce(sum(payments), 0)::text`.as('n'),
    sql<string>`coalesce(sum(volume), 0)::text`.as('v'),
  ]);
  if (gateway !== undefined) q = q.where('gateway', '=', gateway);
  if (first !== null) q = q.where('day', '>=', first.toString());
  if (last !== null) q = q.where('day', '<=', last.toString());
  return q.executeTakeFirstOrThrow();
}

async function fromPayments(db: Kysely<Database>, gateway: string | undefined, from: bigint, to: bigint): Promise<Sum> {
  let q = db.selectFrom('payments').select([
    sql<string>`count(*)::text`.as('n'),
    sql<string>`coalesce(sum(amount), 0)::text`.as('v'),
  ]).where('kind', '=', 'PaymentRecord').where('at', '>=', from.toString()).where('at', '<=', to.toString());
  if (gateway !== undefined) q = q.where('gateway', '=', gateway);
  return q.executeTakeFirstOrThrow();
}

export async function paymentStats(db: Kysely<Database>, f: PaymentStatsFilter): Promise<PaymentStats> {
  const from = f.startTime === undefined ? null : BigInt(Math.ceil(f.startTime));
  const to = f.endTime === undefined ? null : BigInt(Math.floor(f.endTime));
  if (from !== null && to !== null && from > to) return { count: 0, volume: '0' };
  // whole days inside [from, to]
  const firstFull = from === null ? null : (from % DAY === 0n ? epochDay(from) : epochDay(from) + 1n);
  const lastFull = to === null ? null : ((to + 1n) % DAY === 0n ? epochDay(to) : epochDay(to) - 1n);
  const parts: Promise<Sum>[] = [];
  if (firstFull !== null && lastFull !== null && firstFull > lastFull) {
    parts.push(fromPayments(db, f.gateway, from!, to!));
  } else {
    parts.push(fromDays(db, f.gateway, firstFull, lastFull));
    if (from !== null && firstFull! * DAY > from) parts.push(fromPayments(db, f.gateway, from, firstFull! * DAY - 1n));
    if (to !== null && (lastFull! + 1n) * DAY - 1n < to) parts.push(fromPayments(db, f.gateway, (lastFull! + 1n) * DAY, to));
  }
  const sums = await Promise.all(parts);
  return {
    count: sums.reduce((n, s) => n + Number(s.n), 0),
    volume: sums.reduce((v, s) => v + BigInt(s.v), 0n).toString(),
  };
}
