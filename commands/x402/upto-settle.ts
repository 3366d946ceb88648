/**
 * The service's side of an x402://upto settlement, the upto scheme's `report`: a bearer the
 * engine admitted for the amount (its JWT and Active UpTo policy), the reported amount within
 * the authorization and before its deadline, then, when the merchant sends its signed
 * execute_payment, the check (upto.ts), one settlement per policy across nodes (upto-marker.ts), send and
 * confirm. A settlement left in doubt (its answer lost) is resolved from the chain by the
 * next request: its stored result, a 503 while it may land, or cleared once it never can.
 * Without a transaction the report only asks whether `amount` (else the maximum) would be admitted.
 * The same settlement sent again after its answer was lost is answered first (settledUpto), before
 * an admission its landing made fail.
 */
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import type { SchemeContext, UsageAnswer, X402Grant } from './schemes/scheme.js';
import { chainRead, confirmPayment, PaymentRefused, sendPayment } from './settle.js';
import { checkUptoSettlement, field, verifiedSignature } from './upto.js';
import { claimMarker, markDone, markerHeld, releaseMarker, settledBy, signedFacts, stillInDoubt, type MarkerDeps, type UptoMarker } from './upto-marker.js';
import { status } from '../../infra/solana/sender.js';
import { VersionedTransaction } from '@solana/web3.js';

export async function settleUpto(
  ctx: SchemeContext, grant: X402Grant, amount: bigint | undefined, serializedTransaction: string | undefined,
): Promise<UsageAnswer> {
  const refuse = (reason: string): UsageAnswer => ({ admitted: false, reason });
  const read = await chainRead('getAccountInfo', () => ctx.policies.get(grant.policy));
  if (read.kind !== 'found') return refuse(`the payment policy ${grant.policy} no longer exists`);
  const t = asPolicyType(read.data['policy_type']);
  if (t.kind !== 'UpTo') return refuse('the payment policy is not an UpTo authorization');
  if (amount !== undefined && amount > BigInt(t.max_amount)) return refuse(`the amount ${amount} is above the authorized maximum ${t.max_amount}`);
  const now = ctx.nowSeconds();
  if (BigInt(now) >= BigInt(t.deadline)) return refuse(`the authorization's deadline ${t.deadline} has passed`);
  if (serializedTransaction === undefined || amount === undefined) return { admitted: true, ...grant };

  const programId = ctx.pdas.programId;
  const opts = { programId, commitment: ctx.chain.commitment };
  const gw = await chainRead('getAccountInfo', () => readProgramAccount(ctx.chain.rpc, field(read.data, 'gateway'), 'PaymentGateway', opts));
  const allowed = [field(read.data, 'recipient'), ...(gw.kind === 'found' ? [field(gw.data, 'signer')] : [])];
  const check = checkUptoSettlement(serializedTransaction, { programId, policy: grant.policy, amount, allowed });
  if (!check.ok) return refuse(check.reason);

  const deps = markerDeps(ctx);
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
    await sendPayment(ctx.chain, { wire: serializedTransaction, signature: check.signature });
    await confirmPayment(ctx.chain, check.signature);
  } catch (err) {
    // a refused first send landed nothing: the marker goes; anything else leaves it to be resolved from the chain
    if (!(err instanceof PaymentRefused)) throw err;
    if (claim.kind === 'resend') throw stillInDoubt(`the settlement ${check.signature} was refused on a resend (${err.reason})`);
    await releaseMarker(deps, grant.policy, mine);
    return refuse(err.reason);
  }
  await markDone(deps, grant.policy, mine);
  const after = await chainRead('getAccountInfo', () => readProgramAccount(ctx.chain.rpc, grant.policy, 'PaymentPolicy', opts));
  ctx.policies.prime(after);
  return { admitted: true, ...grant, settled: { amount: amount.toString(), transaction: check.signature } };
}

/**
 * A report that sends again the bytes of a settlement already made: its answer, read from the
 * marker (resolved from the chain when it was left sending), before the admission that a
 * settlement that landed no longer passes (its policy Completed, its delegation used up, its
 * JWT or deadline passed). The bytes must verify and be the marker's transaction, of the amount
 * reported; anything else is undefined, and goes the usual way through every check.
 */
export async function settledUpto(ctx: SchemeContext, grant: X402Grant, amount: bigint | undefined, serializedTransaction: string): Promise<UsageAnswer | undefined> {
  const signature = verifiedSignature(serializedTransaction);
  if (amount === undefined || signature === undefined) return undefined;
  const deps = markerDeps(ctx);
  const made = await settledBy(deps, grant.policy, signature);
  if (made) return made.amount === amount.toString() ? settledAnswer(grant, made) : undefined;
  return (await markerHeld(deps, grant.policy)) ? undefined : landedUnmarked(ctx, grant, amount, serializedTransaction, signature);
}

/**
 * The policy has no marker (Redis lost it, or it expired DONE_TTL_SECONDS after the settlement): the
 * chain's word for these bytes. They must be one execute_payment of the JWT's policy for `amount`, and
 * have landed without error (the program let only the policy's recipient or the gateway's signer send
 * it, so whoever signed is one of them): a settlement made, answered as such. Anything else goes on as a
 * settlement, through every check (a policy it completed is refused there).
 */
async function landedUnmarked(ctx: SchemeContext, grant: X402Grant, amount: bigint, wire: string, signature: string): Promise<UsageAnswer | undefined> {
  const message = VersionedTransaction.deserialize(Buffer.from(wire, 'base64')).message; // verifiedSignature read it already
  const signers = message.staticAccountKeys.slice(0, message.header.numRequiredSignatures).map((k) => k.toBase58());
  const check = checkUptoSettlement(wire, { programId: ctx.pdas.programId, policy: grant.policy, amount, allowed: signers });
  if (!check.ok) return undefined;
  const fate = await status(ctx.chain, signature, { history: true });
  return fate.kind === 'landed' ? { admitted: true, ...grant, settled: { amount: amount.toString(), transaction: signature } } : undefined;
}

const markerDeps = (ctx: SchemeContext): MarkerDeps => ({ redis: ctx.redis, redisPrefix: ctx.redisPrefix, io: ctx.chain, programId: ctx.pdas.programId });

const settledAnswer = (grant: X402Grant, m: UptoMarker): UsageAnswer => ({ admitted: true, ...grant, settled: { amount: m.amount, transaction: m.transaction } });
