/**
 * Settling one checked payment, as the owner of its idempotency lease: an existing Active
 * policy with the requirement's terms serves as is (no transaction sent); otherwise the
 * transaction is sent, confirmed, and the created policy read back. Then the JWT.
 */
import type { Clock } from '../../src/kernel/context.js';
import type { AccountRead } from '../../infra/solana/accounts.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import type { PolicyCache } from './policy-cache.js';
import { keyValueHeader, type PaymentRequirement } from './requirements.js';
import type { SettledResult } from './idempotency.js';
import {
  blockhashValid, confirmPayment, findMatchingPolicy, PaymentRefused, readCreatedPolicy, sendPayment, type ChainDeps,
} from './settle.js';
import { issueX402Token, type X402Signer } from './tokens.js';
import type { CheckedPayment } from './verify-transaction.js';

export interface SettleDeps {
  chain: ChainDeps;
  signer: X402Signer;
  clock: Clock;
  policies: PolicyCache;
  jwtTtlSeconds: number;
  /** SUBSCRIPTION_GRACE_SECONDS: an overdue subscription does not serve as an existing policy */
  graceSeconds: number;
}

export async function settlePayment(deps: SettleDeps, r: PaymentRequirement, p: CheckedPayment): Promise<SettledResult> {
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  const existing = await findMatchingPolicy(deps.chain, p.payer, r, nowSeconds, deps.graceSeconds);
  // the transaction is not sent then, so nothing on chain vouches for its freshness but this
  if (existing && !(await blockhashValid(deps.chain, p.recentBlockhash))) {
    throw new PaymentRefused('the transaction\'s blockhash has expired; sign the payment again with a recent blockhash');
  }
  if (existing) return answer(deps, r, p.payer, existing, undefined);
  return answer(deps, r, p.payer, await sendAndRead(deps, r, p), p.signature);
}

/**
 * A payment without a transaction: the payer (whose proof the middleware checked) holds
 * an Active policy with the requirement's terms already, or is refused.
 */
export async function settleExisting(deps: SettleDeps, r: PaymentRequirement, payer: string): Promise<SettledResult> {
  const existing = await findMatchingPolicy(deps.chain, payer, r, Math.floor(deps.clock.now() / 1000), deps.graceSeconds);
  if (!existing) throw new PaymentRefused(`${payer} holds no active payment policy with the terms of requirement ${r.id}; send a transaction that creates one`);
  return answer(deps, r, payer, existing, undefined);
}

async function answer(
  deps: SettleDeps, r: PaymentRequirement, payer: string, policy: AccountRead & { kind: 'found' }, transaction: string | undefined,
): Promise<SettledResult> {
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  deps.policies.prime(policy);
  const expiresAt = jwtExpiry(policy, nowSeconds + deps.jwtTtlSeconds);
  const jwt = await issueX402Token(deps.signer, {
    payer, policy: policy.address, requirementId: r.id, scheme: r.scheme, network: r.network, tokenMint: r.tokenMint,
  }, expiresAt);
  const pairs: [string, string | number][] = [
    ['scheme', r.scheme], ['network', r.network], ['id', r.id], ['timestamp', deps.clock.now()], ['policy', policy.address],
  ];
  if (transaction !== undefined) pairs.push(['transaction', transaction]);
  const message = transaction === undefined
    ? `the payer already holds the active payment policy ${policy.address} with these terms; no new policy was created. Present the JWT as a bearer token.`
    : `payment policy ${policy.address} created (transaction ${transaction}). Present the JWT as a bearer token.`;
  return {
    paymentResponse: keyValueHeader(pairs), body: { jwt, message }, payer, policy: policy.address, expiresAt,
    ...(transaction !== undefined ? { transaction } : {}),
  };
}

/** An upto authorization's JWT expires at its deadline, when that comes before the usual lifetime. */
function jwtExpiry(policy: AccountRead & { kind: 'found' }, usual: number): number {
  const t = asPolicyType(policy.data['policy_type']);
  return t.kind === 'UpTo' ? Math.min(usual, Number(t.deadline)) : usual;
}

async function sendAndRead(deps: SettleDeps, r: PaymentRequirement, p: CheckedPayment) {
  await sendPayment(deps.chain, p);
  await confirmPayment(deps.chain, p.signature);
  return readCreatedPolicy(deps.chain, p, r);
}
