/**
 * The reads behind token issuance: a wallet's Active payment policies and Completed subscriptions (payment_policies
 * read model, owner index) and PaymentRecord events from the archive (`events`), by
 * transaction signature or by payer (jsonb containment, answered by the GIN index).
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { listEvents } from '../../queries/events/events-query.js';
import type { EventData } from '../../src/kernel/events/codec.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import type { ActivePolicy, PaymentRecordClaim } from './claims.js';

export interface IssueFilters {
  tokenMint?: string;
  policyAddress?: string;
  recipient?: string;
  /** the gateway account the policies and payments are at */
  gateway?: string;
  /** the 64-byte memo of the trackingId */
  memo?: Buffer;
}

/** Bounded so the JWT stays a few kilobytes: a header, not a document. */
export const MAX_POLICY_CLAIMS = 10;
export const MAX_LAST_PAYMENTS = 5;

export async function activePolicies(db: Db, wallet: string, f: IssueFilters): Promise<ActivePolicy[]> {
  let q = db.selectFrom('payment_policies')
    .select(['address', 'gateway', 'recipient', 'token_mint', 'tracking_id', 'status', 'total_paid', 'payment_count', 'policy_type'])
    // a literal predicate, so the partial owner index (WHERE NOT deleted) applies
    .where(sql<boolean>`NOT deleted`)
    .where('owner', '=', wallet)
    // a Completed subscription still holds through the period its last payment bought (claims.ts bounds it)
    .where((eb) => eb.or([eb('status', '=', 'Active'), eb.and([eb('status', '=', 'Completed'), eb('variant', '=', 'Subscription')])]));
  if (f.tokenMint !== undefined) q = q.where('token_mint', '=', f.tokenMint);
  if (f.policyAddress !== undefined) q = q.where('address', '=', f.policyAddress);
  if (f.recipient !== undefined) q = q.where('recipient', '=', f.recipient);
  if (f.gateway !== undefined) q = q.where('gateway', '=', f.gateway);
  if (f.memo !== undefined) q = q.where('memo', '=', f.memo);
  const rows = await q.orderBy('created_slot', 'desc').orderBy('address', 'desc').limit(MAX_POLICY_CLAIMS * 2).execute();
  return rows.map((r) => ({
    address: r.address,
    gateway: r.gateway,
    recipient: r.recipient,
    tokenMint: r.token_mint,
    trackingId: r.tracking_id,
    status: r.status === 'Completed' ? 'Completed' as const : 'Active' as const,
    totalPaid: r.total_paid,
    paymentCount: r.payment_count,
    policyType: asPolicyType(r.policy_type),
  }));
}

const s = (d: EventData, k: string): string => {
  const v = d[k];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
};

export function paymentClaim(e: { signature: string; slot: number | string; data: EventData }): PaymentRecordClaim {
  const d = e.data;
  return {
    signature: e.signature,
    slot: Number(e.slot),
    timestamp: Number(s(d, 'timestamp')),
    amount: s(d, 'amount'),
    gateway: s(d, 'gateway'),
    paymentPolicy: s(d, 'payment_policy'),
    payer: s(d, 'payer'),
    recipient: s(d, 'recipient'),
    tokenMint: s(d, 'token_mint'),
    recordId: Number(d['record_id'] ?? 0),
    trackingId: s(d, 'memo'),
  };
}

function fieldFilters(f: IssueFilters): Record<string, string> {
  return {
    ...(f.tokenMint !== undefined ? { token_mint: f.tokenMint } : {}),
    ...(f.policyAddress !== undefined ? { payment_policy: f.policyAddress } : {}),
    ...(f.recipient !== undefined ? { recipient: f.recipient } : {}),
    ...(f.gateway !== undefined ? { gateway: f.gateway } : {}),
  };
}

/** PaymentRecords of one transaction that match the filters (and the payer, when given). */
export async function paymentsOfTransaction(db: Db, signature: string, payer: string | undefined, f: IssueFilters): Promise<PaymentRecordClaim[]> {
  let q = db.selectFrom('events').select(['signature', 'slot', 'data', 'memo'])
    .where('signature', '=', signature)
    .where('name', '=', 'PaymentRecord');
  if (f.memo !== undefined) q = q.where('memo', '=', f.memo);
  const rows = await q.orderBy('event_index', 'asc').execute();
  const wanted = { ...fieldFilters(f), ...(payer !== undefined ? { payer } : {}) };
  return rows
    .filter((r) => Object.entries(wanted).every(([k, v]) => r.data[k] === v))
    .map(paymentClaim);
}

/** The payer's latest PaymentRecords matching the filters, newest first. */
export async function recentPayments(db: Db, payer: string, f: IssueFilters): Promise<PaymentRecordClaim[]> {
  const events = await listEvents(db, {
    name: 'PaymentRecord',
    fields: { payer, ...fieldFilters(f) },
    ...(f.memo !== undefined ? { memos: [f.memo] } : {}),
  }, { limit: MAX_LAST_PAYMENTS, offset: 0 });
  return events.map(paymentClaim);
}
