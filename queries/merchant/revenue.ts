/**
 * A gateway's revenue series from the merchant read model: one series per mint, one
 * entry per bucket from `from` to `to` (buckets without payments are zeros), MRR carried
 * from the last bucket that moved it, so every entry holds the MRR at its bucket's end.
 * Settled x402 `exact` payments add to gross, net and payments (exact-payments.ts).
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { bucketStart, nextBucketStart, type Bucket } from '../../src/kernel/domain/buckets.js';
import { microToDecimal } from '../../src/kernel/domain/mrr.js';
import { invalid } from '../../src/kernel/http/errors.js';
import type { RevenueAnswer as WireRevenueAnswer, RevenueEntry, RevenueSeries } from '../../src/kernel/wire/answers/merchant.js';
import { exactRevenueRows } from './exact-payments.js';

export const MAX_BUCKETS = 1000;

// the answer's shape is the wire module's, which the dashboard page reads as well
export type { RevenueEntry, RevenueSeries } from '../../src/kernel/wire/answers/merchant.js';

export interface RevenueAnswer extends WireRevenueAnswer { bucket: Bucket }

/** The bucket starts covering [from, to]; 400 past MAX_BUCKETS. */
export function bucketStarts(bucket: Bucket, from: number, to: number): number[] {
  const out: number[] = [];
  for (let s = bucketStart(bucket, from); s <= to; s = nextBucketStart(bucket, s)) {
    out.push(s);
    if (out.length > MAX_BUCKETS) throw invalid(`from..to spans more than ${MAX_BUCKETS} ${bucket} buckets`);
  }
  return out;
}

/** Default range: the last 30 days, 26 weeks or 12 months up to now. */
export function defaultFrom(bucket: Bucket, to: number): number {
  const d = new Date(to * 1000);
  if (bucket === 'day') return to - 29 * 86_400;
  if (bucket === 'week') return to - 25 * 7 * 86_400;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 11, 1) / 1000;
}

interface Row {
  token_mint: string; bucket_start: string; gross: string; gateway_fee: string; protocol_fee: string; net: string;
  payments: string; new_subscriptions: number; ended_subscriptions: number; mrr_micro: string;
}

/** The bucket rows in [first, last], plus each mint's last row before `first` (the MRR carried in). */
export function revenueRowsQuery(gateway: string, bucket: Bucket, first: number, last: number, tokenMint?: string) {
  const mintFilter = tokenMint === undefined ? sql`` : sql`AND token_mint = ${tokenMint}`;
  return sql<Row>`
    SELECT token_mint, bucket_start::text, gross::text, gateway_fee::text, protocol_fee::text, net::text, payments::text,
      new_subscriptions, ended_subscriptions, mrr_micro::text
    FROM merchant_revenue WHERE gateway = ${gateway} AND bucket = ${bucket} ${mintFilter}
      AND bucket_start BETWEEN ${first} AND ${last}
    UNION ALL
    (SELECT DISTINCT ON (token_mint) token_mint, bucket_start::text, '0', '0', '0', '0', '0', 0, 0, mrr_micro::text
    FROM merchant_revenue WHERE gateway = ${gateway} AND bucket = ${bucket} ${mintFilter} AND bucket_start < ${first}
    ORDER BY token_mint, bucket_start DESC)
    ORDER BY 1, 2`;
}

export async function revenueSeries(db: Db, gateway: string, q: { bucket: Bucket; from: number; to: number; tokenMint?: string }): Promise<RevenueAnswer> {
  const starts = bucketStarts(q.bucket, q.from, q.to);
  const first = starts[0] ?? bucketStart(q.bucket, q.from);
  const last = starts[starts.length - 1] ?? first;
  const [{ rows }, exact] = await Promise.all([
    revenueRowsQuery(gateway, q.bucket, first, last, q.tokenMint).execute(db), exactRevenueRows(db, gateway, q.bucket, first, last, q.tokenMint),
  ]);
  const byMint = new Map<string, Row[]>();
  for (const r of rows) byMint.set(r.token_mint, [...(byMint.get(r.token_mint) ?? []), r]);
  const exactAt = new Map(exact.map((e) => [`${e.token_mint}:${e.bucket_start}`, e]));
  for (const e of exact) if (!byMint.has(e.token_mint)) byMint.set(e.token_mint, []);
  if (q.tokenMint !== undefined && !byMint.has(q.tokenMint)) byMint.set(q.tokenMint, []);
  const series: RevenueSeries[] = [];
  for (const [tokenMint, list] of byMint) {
    const at = new Map(list.filter((r) => Number(r.bucket_start) >= first).map((r) => [Number(r.bucket_start), r]));
    let mrr = list.find((r) => Number(r.bucket_start) < first)?.mrr_micro ?? '0';
    const buckets = starts.map((start): RevenueEntry => {
      const r = at.get(start);
      if (r) mrr = r.mrr_micro;
      const x = exactAt.get(`${tokenMint}:${start}`);
      const plus = (a: string | undefined): string => (x ? (BigInt(a ?? '0') + BigInt(x.gross)).toString() : (a ?? '0'));
      return {
        start, gross: plus(r?.gross), gatewayFee: r?.gateway_fee ?? '0', protocolFee: r?.protocol_fee ?? '0', net: plus(r?.net),
        payments: Number(r?.payments ?? 0) + Number(x?.payments ?? 0), newSubscriptions: r?.new_subscriptions ?? 0, endedSubscriptions: r?.ended_subscriptions ?? 0,
        mrr: microToDecimal(BigInt(mrr)),
      };
    });
    series.push({ tokenMint, buckets });
  }
  return { bucket: q.bucket, from: q.from, to: q.to, series };
}
