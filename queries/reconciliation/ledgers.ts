/**
 * Every read of the reconciliation from Postgres, in one file so that a change to a
 * ledger's columns is adjusted here alone: the chain as indexed (PaymentRecords in the
 * payments read model, policies), and the service's ledgers (scheduler intents,
 * pay-as-you-go charges and usage, prepaid credits and draws). The tables are the
 * commands' own; this module reads them through the composed schema, never their code.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';

/** A PaymentRecord as indexed from the chain. */
export interface ChainPayment {
  policy: string; signature: string; amount: bigint; recordId: number;
  /** block time (or the program's clock), unix seconds */
  at: number;
  /** the program's clock at the payment, unix seconds */
  timestamp: number;
}

export type RecordSource = 'scheduler' | 'payg' | 'prepaid' | 'upto';

/** A payment the service sent or recorded, with the transaction it names. */
export interface ServiceRecord {
  source: RecordSource; id: string; policy: string;
  /** scheduler: pending | sending | executed | dropped | past_due | given_up; payg: sending | executed | failed; prepaid: paid; upto: sending | paid */
  status: string;
  amount: bigint | null; signature: string;
  /** when the record was made or last changed, unix seconds */
  at: number;
}

/** Metered pay-as-you-go usage not in an executed charge: refused by the chain, or waiting. */
export interface UsageGap { policy: string; kind: 'unbillable' | 'unsettled'; reason: string; amount: bigint; requests: number; oldest: number }

export interface PrepaidDraw { policy: string; credit: bigint; drawn: bigint; transaction: string | null }

/** A policy of the gateway as the read model holds it, with its PaymentRecords counted since it was created. */
export interface IndexedPolicy { address: string; variant: string; indexedPayments: number; createdSlot: string }

const secs = (d: Date | null | undefined): number => (d ? Math.floor(d.getTime() / 1000) : 0);

/** The gateways this service moves money for: delegated signers, prepaid credits. */
export async function servedGateways(db: Db): Promise<string[]> {
  const r = await sql<{ gateway: string }>`
    SELECT gateway FROM scheduler_gateways UNION SELECT gateway FROM prepaid_credit_payments ORDER BY 1`.execute(db);
  return r.rows.map((x) => x.gateway);
}

/** The wallet the service signs the gateway's executions with (undefined: none delegated). */
export async function serviceSigner(db: Db, gateway: string): Promise<string | undefined> {
  const r = await db.selectFrom('scheduler_gateways').select('signer').where('gateway', '=', gateway).executeTakeFirst();
  return r?.signer;
}

/** The gateway's PaymentRecords from `since` on, or (with `signatures`) those of these transactions whenever they were paid. */
export async function chainPayments(db: Db, gateway: string, since: number, signatures?: readonly string[]): Promise<ChainPayment[]> {
  if (signatures?.length === 0) return [];
  let q = db.selectFrom('payments').select(['policy', 'signature', 'amount', 'record_id', 'at', 'timestamp'])
    .where('kind', '=', 'PaymentRecord').where('gateway', '=', gateway);
  q = signatures ? q.where('signature', 'in', [...signatures]) : q.where('at', '>=', String(since));
  const rows = await q.orderBy('slot').orderBy('event_index').execute();
  return rows.map((r) => ({ policy: r.policy, signature: r.signature, amount: BigInt(r.amount), recordId: Number(r.record_id), at: Number(r.at), timestamp: Number(r.timestamp) }));
}

/**
 * The service's records of the gateway that name a transaction: those made or changed
 * since `since`, and any older one whose transaction is among `alsoSignatures` (a payment
 * in the window sent by a record from before it).
 */
export async function serviceRecords(db: Db, gateway: string, since: number, alsoSignatures: readonly string[]): Promise<ServiceRecord[]> {
  const from = new Date(since * 1000);
  const also = alsoSignatures.length > 0 ? [...alsoSignatures] : [''];
  const intents = await db.selectFrom('execution_intents').select(['id', 'policy', 'status', 'signature', 'updated_at'])
    .where('gateway', '=', gateway).where('signature', 'is not', null)
    .where((eb) => eb.or([eb('updated_at', '>=', from), eb('signature', 'in', also)])).execute();
  const charges = await db.selectFrom('payg_charges').select(['id', 'policy', 'status', 'amount', 'signature', 'created_at', 'finished_at'])
    .where('gateway', '=', gateway)
    .where((eb) => eb.or([eb('created_at', '>=', from), eb('finished_at', '>=', from), eb('signature', 'in', also)])).execute();
  // each payment of a credit (a credit's address paid again is another payment: migration 1018)
  const credits = await db.selectFrom('prepaid_credit_payments').select(['policy', 'amount', 'transaction', 'paid_at'])
    .where('gateway', '=', gateway).where('transaction', 'is not', null)
    .where((eb) => eb.or([eb('paid_at', '>=', from), eb('transaction', 'in', also)])).execute();
  return [
    ...intents.map((i): ServiceRecord => ({ source: 'scheduler', id: i.id, policy: i.policy, status: i.status, amount: null, signature: i.signature ?? '', at: secs(i.updated_at) })),
    ...charges.map((c): ServiceRecord => ({ source: 'payg', id: c.id, policy: c.policy, status: c.status, amount: BigInt(c.amount), signature: c.signature, at: secs(c.finished_at ?? c.created_at) })),
    ...credits.map((c): ServiceRecord => ({ source: 'prepaid', id: c.policy, policy: c.policy, status: 'paid', amount: BigInt(c.amount), signature: c.transaction ?? '', at: secs(c.paid_at) })),
  ];
}

/**
 * Usage of the gateway metered since `since` and not in a charge: refused for good (with
 * the chain's reason), or unsettled and metered before `unsettledBefore` (served; a
 * reservation not served yet is left out).
 */
export async function usageGaps(db: Db, gateway: string, since: number, unsettledBefore: Date): Promise<UsageGap[]> {
  const r = await sql<{ policy: string; kind: 'unbillable' | 'unsettled'; reason: string; amount: string; requests: string; oldest: Date }>`
    SELECT policy, CASE WHEN unbillable_reason IS NULL THEN 'unsettled' ELSE 'unbillable' END AS kind,
           coalesce(unbillable_reason, '') AS reason, sum(chunk)::text AS amount, count(*)::text AS requests, min(metered_at) AS oldest
      FROM payg_usage
     WHERE gateway = ${gateway} AND metered_at >= ${new Date(since * 1000)} AND charge_id IS NULL AND chunk > 0
       AND (unbillable_reason IS NOT NULL OR (payg_usage_served(payg_usage) AND metered_at < ${unsettledBefore}))
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`.execute(db);
  return r.rows.map((x) => ({ policy: x.policy, kind: x.kind, reason: x.reason, amount: BigInt(x.amount), requests: Number(x.requests), oldest: secs(x.oldest) }));
}

/** Each prepaid credit of the gateway with what was drawn on it (rows recorded ahead once served: migration 1022). */
export async function prepaidDraws(db: Db, gateway: string): Promise<PrepaidDraw[]> {
  const r = await sql<{ policy: string; credit: string; drawn: string; transaction: string | null }>`
    SELECT c.policy, c.credit::text AS credit, c.transaction,
           coalesce((SELECT sum(u.amount) FROM prepaid_usage u WHERE u.policy = c.policy AND prepaid_usage_served(u)), 0)::text AS drawn
      FROM prepaid_credits c WHERE c.gateway = ${gateway}`.execute(db);
  return r.rows.map((x) => ({ policy: x.policy, credit: BigInt(x.credit), drawn: BigInt(x.drawn), transaction: x.transaction }));
}

/**
 * The gateway's policies that moved money through the service or on chain since `since`,
 * each with the PaymentRecords indexed since its creation (a reused address restarts).
 */
export async function indexedPolicies(db: Db, gateway: string, addresses: readonly string[]): Promise<IndexedPolicy[]> {
  if (addresses.length === 0) return [];
  const r = await sql<{ address: string; variant: string; created_slot: string; n: string }>`
    SELECT p.address, p.variant, p.created_slot::text AS created_slot,
           (SELECT count(*) FROM payments y WHERE y.policy = p.address AND y.kind = 'PaymentRecord' AND y.slot >= p.created_slot)::text AS n
      FROM payment_policies p WHERE p.gateway = ${gateway} AND p.address = ANY(${[...addresses]}::text[]) AND NOT p.deleted`.execute(db);
  return r.rows.map((x) => ({ address: x.address, variant: x.variant, indexedPayments: Number(x.n), createdSlot: x.created_slot }));
}

/** The indexed PaymentRecords of a policy whose program clock is at or after `from` (a period's total). */
export async function indexedTotalSince(db: Db, policy: string, createdSlot: string, from: number): Promise<bigint> {
  const r = await sql<{ total: string }>`
    SELECT coalesce(sum(amount), 0)::text AS total FROM payments
     WHERE policy = ${policy} AND kind = 'PaymentRecord' AND slot >= ${createdSlot}::bigint AND timestamp >= ${from}`.execute(db);
  return BigInt(r.rows[0]?.total ?? '0');
}
