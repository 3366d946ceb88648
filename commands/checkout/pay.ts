/**
 * Paying a checkout session from its page:
 *
 * - `transactionFor`: the unsigned Payment transaction exactly as the SDK builds it for the
 *   session's requirement (commands/x402/payment-transaction.ts), the payer its fee payer,
 *   and the parts of the proof-of-possession message (commands/x402/proof.ts) the page
 *   completes with the transaction's signature once the wallet has signed.
 * - `payFor`: the signed transaction and the proof go through the x402 engine's `pay`, the
 *   path of a Payment header (every check of the scheme's, then settle: send, confirm, read
 *   back), under the session's requirement. One pay wins: the row moves open → paying
 *   (compare-and-set) before anything is sent, paying → complete with the announcement after
 *   confirmation, and back to open when the payment was refused or its outcome is unknown
 *   (the same signed transaction may then be sent again: the engine settles a signature once).
 */
import type { Db } from '../../infra/postgres/database.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { invalid } from '../../src/kernel/http/errors.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import type { CheckoutTransaction, PayAnswer } from '../../src/kernel/wire/answers/checkout.js';
import type { PaymentEngine } from '../x402/engine.js';
import { paymentPayloadFromJson } from '../x402/payload.js';
import { buildUnsignedPayment } from '../x402/payment-transaction.js';
import { PROOF_PREFIX, PROOF_WINDOW_SECONDS } from '../x402/proof.js';
import { X402_VERSION } from '../x402/requirements.js';
import { chainRead } from '../x402/settle.js';
import type { RoomEmitter } from '../scheduler/lifecycle-events.js';
import { completeSession } from './events.js';
import { paymentRefused, sessionEnded } from './refusals.js';
import { acceptedOf, requirementOf, type RequirementContext } from './requirement.js';
import { claimForPayment, findSession, PAYING_LEASE_SECONDS, releasePayment, statusAt, storedOf, type SessionRow } from './store.js';

export interface PayDeps {
  db: Db;
  rpc: RpcClient;
  commitment: Commitment;
  engine: PaymentEngine;
  requirements: RequirementContext;
  now: () => number;
  rooms?: RoomEmitter | undefined;
}

// the answers' shapes are the wire module's, which the checkout page reads as well
export type { CheckoutTransaction, PayAnswer, ProofParts } from '../../src/kernel/wire/answers/checkout.js';

function usable(row: SessionRow, now: Date): void {
  const status = statusAt(row, now);
  if (status === 'complete') throw sessionEnded('session_complete');
  if (status === 'expired') throw sessionEnded('session_expired');
  if (row.status === 'paying' && now.getTime() - row.updated_at.getTime() < PAYING_LEASE_SECONDS * 1000) throw sessionEnded('session_paying');
}

export async function transactionFor(deps: PayDeps, row: SessionRow, payer: string): Promise<CheckoutTransaction> {
  if (!isPublicKey(payer)) throw invalid('payer must be a base58 public key of 32 bytes');
  const now = new Date(deps.now());
  usable(row, now);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const accepted = acceptedOf(storedOf(row), deps.requirements, nowSeconds);
  let built;
  try {
    built = await chainRead('the payment transaction\'s reads', () => buildUnsignedPayment(accepted, {
      payer, rpc: deps.rpc, commitment: deps.commitment, programId: deps.requirements.programId,
    }));
  } catch (err) {
    // the builder's own refusals name the chain's state (no such gateway, an account of another kind)
    if (err instanceof Error && err.constructor === Error) throw invalid(err.message);
    throw err;
  }
  const parts = { prefix: PROOF_PREFIX, requirementId: accepted.id, resource: accepted.resource, signedAt: nowSeconds };
  return {
    transaction: Buffer.from(built.transaction.serialize()).toString('base64'), payer, policy: built.policyAddress,
    proof: { ...parts, windowSeconds: PROOF_WINDOW_SECONDS, template: [parts.prefix, parts.requirementId, parts.resource, '{signature}', String(parts.signedAt)].join('|') },
    lastValidBlockHeight: built.lastValidBlockHeight,
  };
}

export interface PayBody { transaction: string; proof: { signedAt: number; signature: string } }

export function redirectOf(successUrl: string, id: string): string {
  const u = new URL(successUrl);
  u.searchParams.set('session_id', id);
  return u.toString();
}

export async function payFor(deps: PayDeps, row: SessionRow, body: PayBody): Promise<PayAnswer> {
  usable(row, new Date(deps.now()));
  const r = requirementOf(storedOf(row), deps.requirements);
  const decoded = paymentPayloadFromJson({
    x402Version: X402_VERSION, scheme: r.scheme, network: r.network, id: r.id, payload: { serializedTransaction: body.transaction, proof: body.proof },
  });
  if (!decoded.ok) throw invalid(decoded.reason);
  if (!await claimForPayment(deps.db, row.id, new Date(deps.now()))) {
    const again = await findSession(deps.db, row.id);
    usable(again ?? row, new Date(deps.now()));
    throw sessionEnded('session_paying');
  }
  let paid;
  try {
    paid = await deps.engine.pay(decoded.payment, r, r.resource ?? '', r.gateway);
  } catch (err) {
    await releasePayment(deps.db, row.id, new Date(deps.now()));
    throw err;
  }
  if (!paid.ok) {
    await releasePayment(deps.db, row.id, new Date(deps.now()));
    throw paymentRefused(paid.reason);
  }
  const policy = paid.result.policy ?? '';
  const transaction = paid.result.transaction ?? null;
  const done = await completeSession(deps, row, { payer: paid.payer, policy, transaction }, new Date(deps.now()));
  if (!done) throw sessionEnded('session_complete');
  return { status: 'complete', policy, transaction, payer: paid.payer, redirectUrl: redirectOf(row.success_url, row.id) };
}
