/**
 * Aggregates of PaymentRecord events: count and volume (the exact sum of u64 amounts,
 * summed as numeric, never through a double). Read from the archive for now; the SQL is
 * in this one function so that a stats read model can replace it without touching routes.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { TimeRange } from './params.js';

export interface PaymentStatsFilter {
  gateway?: string;
  time: TimeRange;
}

export interface PaymentStats {
  count: number;
  /** sum of amounts in the token's base units, as a decimal string */
  volume: string;
}

export async function paymentStats(db: Db, f: PaymentStatsFilter): Promise<PaymentStats> {
  let q = db
    .selectFrom('events')
    .select([
      sql<string>`count(*)`.as('count'),
      sql<string>`coalesce(sum((data->>'amount')::numeric), 0)::text`.as('volume'),
    ])
    .where('name', '=', 'PaymentRecord');
  if (f.gateway !== undefined) q = q.where(sql<boolean>`data @> ${JSON.stringify({ gateway: f.gateway })}::jsonb`);
  if (f.time.from !== undefined) q = q.where('block_time', '>=', String(f.time.from));
  if (f.time.to !== undefined) q = q.where('block_time', '<=', String(f.time.to));
  const row = await q.executeTakeFirstOrThrow();
  return { count: Number(row.count), volume: row.volume };
}
