/**
 * The service's side of an x402://upto settlement, on the payment engine: the JWT and its
 * Active UpTo policy (engine.authorize), the reported amount within the authorization and
 * before its deadline, then, when the merchant sends its signed execute_payment, the
 * check (upto.ts), one settlement per policy across nodes (upto-marker.ts), send and
 * confirm. A settlement left in doubt (its answer lost) is resolved from the chain by the
 * next request: its stored result, a 503 while it may land, or cleared once it never can.
 * Without a transaction the report only asks whether `amount` (else the maximum) would be admitted.
 */
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import type { PaymentEngine, X402Grant } from './engine.js';
import type { PaymentRequirement } from './requirements.js';
import { chainRead, confirmPayment, PaymentRefused, sendPayment } from './settle.js';
import { checkUptoSettlement, field } from './upto.js';
import { claimMarker, markDone, releaseMarker, signedFacts, stillInDoubt, type MarkerDeps, type UptoMarker } from './upto-marker.js';

export type UptoAnswer =
  | ({ admitted: true; settled?: { amount: string; transaction: string } } & X402Grant)
  | { admitted: false; reason: string };

export async function settleUpto(
  engine: PaymentEngine, token: string, pick: (requirementId: string) => PaymentRequirement | undefined,
  amount: bigint | undefined, serializedTransaction: string | undefined,
): Promise<UptoAnswer> {
  const refuse = (reason: string): UptoAnswer => ({ admitted: false, reason });
  // the reported amount (else the maximum), so that the payer's funding is checked for what will be pulled
  const grant = await engine.authorize(token, (c) => pick(c.requirementId), amount);
  if (typeof grant === 'string') return refuse(grant);
  const read = await chainRead('getAccountInfo', () => engine.policies.get(grant.policy));
  if (read.kind !== 'found') return refuse(`the payment policy ${grant.policy} no longer exists`);
  const t = asPolicyType(read.data['policy_type']);
  if (t.kind !== 'UpTo') return refuse('the payment policy is not an UpTo authorization');
  if (amount !== undefined && amount > BigInt(t.max_amount)) return refuse(`the amount ${amount} is above the authorized maximum ${t.max_amount}`);
  const now = Math.floor(engine.clock.now() / 1000);
  if (BigInt(now) >= BigInt(t.deadline)) return refuse(`the authorization's deadline ${t.deadline} has passed`);
  if (serializedTransaction === undefined || amount === undefined) return { admitted: true, ...grant };

  const opts = { programId: engine.programId, commitment: engine.chain.commitment };
  const gw = await chainRead('getAccountInfo', () => readProgramAccount(engine.chain.rpc, field(read.data, 'gateway'), 'PaymentGateway', opts));
  const allowed = [field(read.data, 'recipient'), ...(gw.kind === 'found' ? [field(gw.data, 'signer')] : [])];
  const check = checkUptoSettlement(serializedTransaction, { programId: engine.programId, policy: grant.policy, amount, allowed });
  if (!check.ok) return refuse(check.reason);

  const deps = markerDeps(engine);
  const mine: UptoMarker = {
    state: 'sending', amount: amount.toString(), transaction: check.signature,
    blockhash: signedFacts(serializedTransaction).blockhash, paymentCount: Number(read.data['payment_count'] ?? 0),
  };
  const claim = await claimMarker(deps, grant.policy, mine);
  if (claim.kind === 'settled') {
    return claim.marker.transaction === check.signature ? settledAnswer(grant, claim.marker) : refuse(`the authorization ${grant.policy} was settled already`);
  }
  if (claim.kind === 'in_doubt') throw stillInDoubt(claim.reason);
  try {
    await sendPayment(engine.chain, { wire: serializedTransaction, signature: check.signature });
    await confirmPayment(engine.chain, check.signature);
  } catch (err) {
    // a refused first send landed nothing: the marker goes; anything else leaves it to be resolved from the chain
    if (!(err instanceof PaymentRefused)) throw err;
    if (claim.kind === 'resend') throw stillInDoubt(`the settlement ${check.signature} was refused on a resend (${err.reason})`);
    await releaseMarker(deps, grant.policy, mine);
    return refuse(err.reason);
  }
  await markDone(deps, grant.policy, mine);
  const after = await chainRead('getAccountInfo', () => readProgramAccount(engine.chain.rpc, grant.policy, 'PaymentPolicy', opts));
  engine.policies.prime(after);
  return { admitted: true, ...grant, settled: { amount: amount.toString(), transaction: check.signature } };
}

const markerDeps = (engine: PaymentEngine): MarkerDeps => ({ redis: engine.redis, redisPrefix: engine.redisPrefix, io: engine.chain, programId: engine.programId });

const settledAnswer = (grant: X402Grant, m: UptoMarker): UptoAnswer => ({ admitted: true, ...grant, settled: { amount: m.amount, transaction: m.transaction } });
