/**
 * x402 `exact` payments as a source of merchant revenue of their own: they are not
 * Tributary program payments (no PaymentRecord, no policy, no protocol or gateway fee), so
 * the merchant read model never sees them; the exact facilitator's ledger
 * (x402_exact_settlements, settled rows, attributed to the gateway that called the
 * facilitator) is read instead. A revenue bucket adds them to gross, net and payments;
 * MRR does not move (a one-off payment recurs nothing). The `exact-payments` export lists them.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Bucket } from '../../src/kernel/domain/buckets.js';

export interface ExactBucketRow { token_mint: string; bucket_start: string; gross: string; payments: string }

/** Settled exact payments of the gateway per bucket (bucket starts in [first, last]), per mint. */
export function exactRevenueQuery(gateway: string, bucket: Bucket, first: number, last: number, tokenMint?: string) {
  const start = sql`extract(epoch FROM date_trunc(${bucket}, settled_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::bigint`;
  const mintFilter = tokenMint === undefined ? sql`` : sql`AND asset = ${tokenMint}`;
  return sql<ExactBucketRow>`
    SELECT asset AS token_mint, ${start}::text AS bucket_start, sum(amount)::text AS gross, count(*)::text AS payments
    FROM x402_exact_settlements
    WHERE state = 'settled' AND gateway = ${gateway} ${mintFilter}
      AND settled_at >= to_timestamp(${first}) AND settled_at < to_timestamp(${last}) + ${`1 ${bucket}`}::interval
    GROUP BY 1, 2 ORDER BY 1, 2`;
}

export async function exactRevenueRows(db: Db, gateway: string, bucket: Bucket, first: number, last: number, tokenMint?: string): Promise<ExactBucketRow[]> {
  return (await exactRevenueQuery(gateway, bucket, first, last, tokenMint).execute(db)).rows;
}

/** The export's query: every settled exact payment of the gateway, oldest first. */
export function exactPaymentsQuery(db: Db, gateway: string, f: { tokenMint?: string; from?: number; to?: number }) {
  let q = db.selectFrom('x402_exact_settlements')
    .select(['settled_at', 'signature', 'payer', 'pay_to', 'asset', 'amount', 'resource', 'memo', 'network'])
    .where('state', '=', 'settled').where('gateway', '=', gateway);
  if (f.tokenMint !== undefined) q = q.where('asset', '=', f.tokenMint);
  if (f.from !== undefined) q = q.where('settled_at', '>=', new Date(f.from * 1000));
  if (f.to !== undefined) q = q.where('settled_at', '<=', new Date(f.to * 1000));
  return q.orderBy('settled_at').orderBy('message_hash');
}
