/**
 * The exact payments' ledger, x402_exact_settlements, one row per transaction message.
 * The row is what makes "settled once, across nodes" durable (the Redis lease in
 * ../idempotency.ts only orders concurrent copies):
 *   sending, no signature   claimed, nothing sent yet (a retry may verify and send)
 *   sending, signature      recorded before the send: in doubt until the chain says
 *   settled                 confirmed; `answer` is what every duplicate gets
 *   failed                  refused before sending (signature null: the same payload may be
 *                           tried again) or failed on chain (signature kept)
 * It also serves @x402/svm as its PendingSettlementStore, so a retry on any node
 * re-confirms the recorded signature instead of signing and sending again.
 */
import type { PendingSettlementStore } from '@x402/core/facilitator';
import type { SettleResponse } from '@x402/core/types';
import type { Db } from '../../../infra/postgres/database.js';
import type { ExactSettlementState } from './tables.js';
import type { SentRecorder } from './svm-signer.js';

export interface SettlementFacts {
  messageHash: string;
  network: string;
  gateway: string;
  feePayer: string;
  payer: string;
  payTo: string;
  asset: string;
  amount: string;
  resource: string | null;
  memo: string | null;
}

/** What a settlement was made for: the requirement's terms and the gateway that asked. */
export type SettledTerms = Pick<SettlementFacts, 'network' | 'gateway' | 'payTo' | 'asset' | 'amount'>;

export interface SettlementRow extends SettledTerms {
  state: ExactSettlementState;
  signature: string | null;
  answer: SettleResponse | null;
  resource: string | null;
}

export async function readSettlement(db: Db, messageHash: string): Promise<SettlementRow | undefined> {
  const r = await db.selectFrom('x402_exact_settlements').select(['state', 'signature', 'network', 'gateway', 'pay_to', 'asset', 'amount', 'answer', 'resource'])
    .where('message_hash', '=', messageHash).executeTakeFirst();
  return r && {
    state: r.state, signature: r.signature, network: r.network, gateway: r.gateway, payTo: r.pay_to, asset: r.asset, amount: r.amount,
    answer: (r.answer ?? null) as SettleResponse | null, resource: r.resource,
  };
}

/** An amount as one spelling (the column is numeric: "0100" and "100" are one amount). */
function canonicalAmount(a: string): string {
  try { return BigInt(a).toString(); } catch { return a; }
}

/**
 * Why a settlement made for `settled` is not an answer to `asked`, or undefined when it is.
 * A stored success is the answer to its own requirement only: given to other terms (another
 * merchant's payTo, another amount), it would buy them with a payment made to someone else;
 * given to another gateway, that gateway would take a payment made to its peer for its own.
 */
export function otherTerms(settled: SettledTerms, asked: SettledTerms): string | undefined {
  for (const k of ['network', 'payTo', 'asset', 'gateway'] as const) {
    if (settled[k] !== asked[k]) return `it was settled for ${k} ${settled[k]}, not ${asked[k]}`;
  }
  if (canonicalAmount(settled.amount) !== canonicalAmount(asked.amount)) return `it was settled for amount ${settled.amount}, not ${asked.amount}`;
  return undefined;
}

/**
 * Claims the message for a settlement attempt: a new row, or a row whose earlier attempt
 * sent nothing. A row with a signature or settled is left as it is (false).
 */
export async function claimSettlement(db: Db, f: SettlementFacts, nowMs: number): Promise<boolean> {
  const values = {
    message_hash: f.messageHash, state: 'sending' as const, signature: null, network: f.network, gateway: f.gateway, fee_payer: f.feePayer,
    payer: f.payer, pay_to: f.payTo, asset: f.asset, amount: f.amount, resource: f.resource, memo: f.memo, answer: null,
    created_at: new Date(nowMs), settled_at: null,
  };
  const r = await db.insertInto('x402_exact_settlements').values(values)
    .onConflict((oc) => oc.column('message_hash').doUpdateSet({
      // the terms too: the settlement is made (and later answered) for this attempt's requirement
      state: 'sending', network: f.network, gateway: f.gateway, fee_payer: f.feePayer, payer: f.payer, pay_to: f.payTo, asset: f.asset, amount: f.amount,
      resource: f.resource, memo: f.memo, created_at: new Date(nowMs),
    }).where('x402_exact_settlements.signature', 'is', null).where('x402_exact_settlements.state', '!=', 'settled'))
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** A refusal before anything was sent: the same payload may be settled later (funded, say). */
export async function releaseUnsent(db: Db, messageHash: string): Promise<void> {
  await db.updateTable('x402_exact_settlements').set({ state: 'failed' })
    .where('message_hash', '=', messageHash).where('signature', 'is', null).where('state', '=', 'sending').execute();
}

/** The chain failed the transaction: terminal, the signature kept. */
export async function markFailedOnChain(db: Db, messageHash: string, answer: SettleResponse): Promise<void> {
  await db.updateTable('x402_exact_settlements').set({ state: 'failed', answer: JSON.stringify(answer) })
    .where('message_hash', '=', messageHash).where('state', '!=', 'settled').execute();
}

export function sentRecorder(db: Db): SentRecorder {
  return {
    async recordSent(messageHash, signature) {
      await db.updateTable('x402_exact_settlements').set({ signature }).where('message_hash', '=', messageHash).where('state', '=', 'sending').execute();
    },
    async recordRefused(messageHash) {
      await db.updateTable('x402_exact_settlements').set({ signature: null, state: 'failed' })
        .where('message_hash', '=', messageHash).where('state', '=', 'sending').execute();
    },
  };
}

/**
 * @x402/svm's pending store over the ledger: `get` is the signature recorded while the
 * row is open. `delete` does nothing: the package calls it before it re-confirms, and a
 * crash right after would forget a sent signature; the row's state moves only by this
 * module's own steps (settled, failed).
 */
export function pendingStore(db: Db): PendingSettlementStore {
  return {
    async get(key) {
      const r = await db.selectFrom('x402_exact_settlements').select('signature')
        .where('message_hash', '=', key).where('state', '=', 'sending').executeTakeFirst();
      return r?.signature ?? undefined;
    },
    async set(key, txHash) {
      await db.updateTable('x402_exact_settlements').set({ signature: txHash }).where('message_hash', '=', key).where('state', '=', 'sending').execute();
    },
    async delete() { /* see above */ },
  };
}

/**
 * Claims the one request a settled payment buys: true once per transaction, on any node
 * (the row, not Redis, remembers it), and only for a row settled for `terms`: a payment
 * settled for another merchant (through the facilitator API, never marked served) buys
 * nothing on this route.
 */
export async function claimServed(db: Db, signature: string, terms: SettledTerms): Promise<boolean> {
  const r = await db.updateTable('x402_exact_settlements').set({ served_at: new Date() })
    .where('signature', '=', signature).where('state', '=', 'settled').where('served_at', 'is', null)
    .where('network', '=', terms.network).where('gateway', '=', terms.gateway).where('pay_to', '=', terms.payTo).where('asset', '=', terms.asset)
    .where('amount', '=', canonicalAmount(terms.amount))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
