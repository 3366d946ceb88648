/**
 * What each merchant export holds: its columns and the rows, read through a cursor
 * (pg-cursor under kysely's executor) in a stable order, a chunk of rows per read.
 * Amounts stay decimal strings.
 */
import { sql, type Compilable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Bucket } from '../../src/kernel/domain/buckets.js';
import { microToDecimal } from '../../src/kernel/domain/mrr.js';
import type { Cell } from './export-writer.js';
import { subscriberRows, subscribersQuery, type SubscriberStatus } from './subscribers.js';
import { exactPaymentsQuery } from './exact-payments.js';

export const EXPORT_KINDS = ['payments', 'policies', 'subscribers', 'revenue', 'exact-payments'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export interface ExportFilter {
  tokenMint?: string;
  status?: SubscriberStatus;
  /** inclusive unix seconds (payments: payment time; revenue: bucket start) */
  from?: number;
  to?: number;
  bucket: Bucket;
}

/** Chunks of rows as the cursor reads them and how each row becomes cells (no async step per row). */
export interface ExportSource { columns: readonly string[]; rows: AsyncIterable<readonly unknown[]>; cells: (row: unknown) => readonly Cell[] }

/** Rows per cursor read: about 0.6 MB of payments; the next read runs while these are written. */
const CURSOR_ROWS = 2_000;
const iso = (s: string | number | null): string | null => (s === null ? null : new Date(Number(s) * 1000).toISOString());

/** The query's rows, a cursor read at a time (kysely's own stream yields row by row, each an await). */
async function* chunks<T>(db: Db, q: Compilable<T>): AsyncGenerator<readonly T[]> {
  for await (const r of db.getExecutor().stream<T>(q.compile(), CURSOR_ROWS)) yield r.rows;
}

function mapRows<T>(db: Db, q: Compilable<T>, f: (r: T) => readonly Cell[]): Pick<ExportSource, 'rows' | 'cells'> {
  return { rows: chunks(db, q), cells: f as (r: unknown) => readonly Cell[] };
}

function payments(db: Db, gateway: string, f: ExportFilter): ExportSource {
  let q = db.selectFrom('payments')
    .select(['at', 'signature', 'policy', 'payer', 'recipient', 'token_mint', 'amount', 'record_id', 'tracking_id', 'event_id'])
    .where('gateway', '=', gateway).where('kind', '=', 'PaymentRecord');
  if (f.tokenMint !== undefined) q = q.where('token_mint', '=', f.tokenMint);
  if (f.from !== undefined) q = q.where('at', '>=', String(f.from));
  if (f.to !== undefined) q = q.where('at', '<=', String(f.to));
  return {
    columns: ['time', 'signature', 'policy', 'payer', 'recipient', 'tokenMint', 'amount', 'recordId', 'trackingId'],
    ...mapRows(db, q.orderBy('at').orderBy('event_id'), (r) => [iso(r.at), r.signature, r.policy, r.payer, r.recipient, r.token_mint, r.amount, Number(r.record_id), r.tracking_id]),
  };
}

function policies(db: Db, gateway: string, f: ExportFilter): ExportSource {
  let q = db.selectFrom('merchant_policies')
    .select(['address', 'payer', 'token_mint', sql<string>`policy_type->>'kind'`.as('variant'), 'status', 'deleted', 'counted', 'monthly_micro', 'next_due', 'created_at'])
    .where('gateway', '=', gateway);
  if (f.tokenMint !== undefined) q = q.where('token_mint', '=', f.tokenMint);
  return {
    columns: ['address', 'payer', 'tokenMint', 'variant', 'status', 'deleted', 'mrr', 'nextDue', 'createdAt'],
    ...mapRows(db, q.orderBy('address'), (r) => [r.address, r.payer, r.token_mint, r.variant, r.status, r.deleted,
      r.counted ? microToDecimal(BigInt(r.monthly_micro)) : '0', iso(r.next_due), iso(r.created_at)]),
  };
}

function subscribers(db: Db, gateway: string, f: ExportFilter): ExportSource {
  const q = subscriberRows(subscribersQuery(db, gateway, f));
  return {
    columns: ['payer', 'tokenMint', 'status', 'activePolicies', 'policies', 'totalPaid', 'payments', 'firstPaymentAt', 'lastPaymentAt', 'nextDue', 'pastDue'],
    ...mapRows(db, q, (r) => [r.payer, r.token_mint, r.status, r.active_policies, r.policies.join(' '), r.total_paid, Number(r.payments),
      iso(r.first_payment_at), iso(r.last_payment_at), iso(r.next_due), r.past_due]),
  };
}

function revenue(db: Db, gateway: string, f: ExportFilter): ExportSource {
  let q = db.selectFrom('merchant_revenue').selectAll().where('gateway', '=', gateway).where('bucket', '=', f.bucket);
  if (f.tokenMint !== undefined) q = q.where('token_mint', '=', f.tokenMint);
  if (f.from !== undefined) q = q.where('bucket_start', '>=', String(f.from));
  if (f.to !== undefined) q = q.where('bucket_start', '<=', String(f.to));
  return {
    columns: ['bucketStart', 'bucket', 'tokenMint', 'gross', 'gatewayFee', 'protocolFee', 'net', 'payments', 'newSubscriptions', 'endedSubscriptions', 'mrr'],
    ...mapRows(db, q.orderBy('token_mint').orderBy('bucket_start'), (r) => [iso(r.bucket_start), r.bucket, r.token_mint, r.gross, r.gateway_fee, r.protocol_fee, r.net, Number(r.payments),
      r.new_subscriptions, r.ended_subscriptions, microToDecimal(BigInt(r.mrr_micro))]),
  };
}

/** Settled x402 exact payments (exact-payments.ts): not in `payments`, which lists the program's PaymentRecords. */
function exactPayments(db: Db, gateway: string, f: ExportFilter): ExportSource {
  return {
    columns: ['time', 'signature', 'payer', 'payTo', 'tokenMint', 'amount', 'resource', 'memo', 'network'],
    ...mapRows(db, exactPaymentsQuery(db, gateway, f), (r) => [r.settled_at ? r.settled_at.toISOString() : null, r.signature, r.payer, r.pay_to, r.asset, r.amount, r.resource, r.memo, r.network]),
  };
}

export function exportSource(db: Db, kind: ExportKind, gateway: string, f: ExportFilter): ExportSource {
  switch (kind) {
    case 'payments': return payments(db, gateway, f);
    case 'policies': return policies(db, gateway, f);
    case 'subscribers': return subscribers(db, gateway, f);
    case 'revenue': return revenue(db, gateway, f);
    case 'exact-payments': return exactPayments(db, gateway, f);
    default: {
      const never: never = kind;
      throw new Error(`unknown export ${String(never)}`);
    }
  }
}
