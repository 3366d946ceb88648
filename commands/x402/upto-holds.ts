/**
 * An `x402://upto` authorization is a hold on the payer's balance until the merchant settles it
 * (or its deadline passes), as a card authorization is: the merchant serves first and pulls up
 * to the maximum later. Two holds on one balance that funds only one left the second merchant
 * serving what it could not pull (its settlement refused for funds). A new authorization is
 * sent only while the payer's balance covers it on top of the holds it has open: its Active,
 * unsettled UpTo policies whose deadline is ahead, read from the chain (so holds made through
 * another facilitator count too).
 */
import { readProgramAccount, readProgramAccounts } from '../../infra/solana/accounts.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { chainRead, EXISTING_POLICY_SCAN, type ChainDeps } from './settle.js';

/** Why the payer's balance does not cover a new hold of `max` on top of its open ones, or undefined. */
export async function holdsProblem(chain: ChainDeps, payer: string, tokenMint: string, max: bigint, nowSeconds: number): Promise<string | undefined> {
  const opts = { programId: chain.pdas.programId, commitment: chain.commitment };
  const userPayment = chain.pdas.userPayment(payer, tokenMint);
  const up = await chainRead('getAccountInfo', () => readProgramAccount(chain.rpc, userPayment, 'UserPayment', opts));
  if (up.kind !== 'found') return undefined; // a first payment: nothing is held yet
  const count = Number(up.data['created_policies_count'] ?? 0);
  const ids: number[] = [];
  for (let id = count; id >= 1 && ids.length < EXISTING_POLICY_SCAN; id -= 1) ids.push(id);
  const reads = ids.length === 0 ? [] : await chainRead('getMultipleAccounts', () =>
    readProgramAccounts(chain.rpc, ids.map((id) => chain.pdas.paymentPolicy(userPayment, id)), 'PaymentPolicy', opts));
  let held = 0n;
  for (const a of reads) {
    if (a.kind !== 'found' || a.data['status'] !== 'Active' || Number(a.data['payment_count'] ?? 0) > 0) continue;
    const t = asPolicyType(a.data['policy_type']);
    if (t.kind === 'UpTo' && BigInt(t.deadline) > BigInt(nowSeconds)) held += BigInt(t.max_amount);
  }
  if (held === 0n) return undefined;
  const account = text(up.data, 'token_account');
  const r = await chainRead('getTokenAccountBalance', () => chain.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [account, { commitment: chain.commitment }]));
  const balance = BigInt(r.value.amount);
  if (held + max <= balance) return undefined;
  return `the payer's balance ${balance} does not cover this authorization of ${max} on top of the ${held} its open UpTo authorizations hold (not settled, deadline ahead): settle them or let them expire first`;
}
