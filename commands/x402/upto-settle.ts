/**
 * The service's side of an x402://upto settlement, on the payment engine: the JWT and its
 * Active UpTo policy (engine.authorize), the reported amount within the authorization and
 * before its deadline, then, when the merchant sends its signed execute_payment, the
 * check (upto.ts), one settlement per policy across nodes (SET NX), send and confirm.
 * Without a transaction the report only asks whether `amount` (else the maximum) would be admitted.
 */
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import type { PaymentEngine, X402Grant } from './engine.js';
import type { PaymentRequirement } from './requirements.js';
import { chainRead, confirmPayment, PaymentRefused, sendPayment } from './settle.js';
import { checkUptoSettlement, field } from './upto.js';

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

  const mark = `${engine.redisPrefix}x402:upto:${grant.policy}`;
  const won = await engine.redis.set(mark, JSON.stringify({ amount: amount.toString(), transaction: check.signature }), 'EX', 7 * 86_400, 'NX');
  if (won !== 'OK') return refuse(`the authorization ${grant.policy} was settled already`);
  try {
    await sendPayment(engine.chain, { wire: serializedTransaction, signature: check.signature });
    await confirmPayment(engine.chain, check.signature);
  } catch (err) {
    await engine.redis.del(mark);
    if (err instanceof PaymentRefused) return refuse(err.reason);
    throw err;
  }
  const after = await chainRead('getAccountInfo', () => readProgramAccount(engine.chain.rpc, grant.policy, 'PaymentPolicy', opts));
  engine.policies.prime(after);
  return { admitted: true, ...grant, settled: { amount: amount.toString(), transaction: check.signature } };
}
