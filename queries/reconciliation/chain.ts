/**
 * The chain's own word, beyond what the indexer wrote: each transaction's fee payer, its
 * outcome and the tokens it moved (getTransaction's pre/post token balances), and each
 * policy account's `payment_count` and pay-as-you-go period (getMultipleAccounts).
 */
import { readProgramAccounts } from '../../infra/solana/accounts.js';
import { RpcResponseError, RpcUnavailableError, type RpcClient } from '../../infra/solana/rpc-client.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';

export interface ChainDeps { rpc: RpcClient; programId: string; commitment: 'processed' | 'confirmed' | 'finalized' }

/**
 * A read tried again on a node that errs (behind, rate limited, no answer): reads change
 * nothing, and a run that gives up at the first such answer could not finish against a
 * busy cluster. Four tries, 200 ms doubling between them.
 */
export async function withRetries<T>(read: () => Promise<T>, tries = 4): Promise<T> {
  for (let n = 1; ; n += 1) {
    try {
      return await read();
    } catch (err) {
      if (n >= tries || !(err instanceof RpcResponseError || err instanceof RpcUnavailableError)) throw err;
      await new Promise((r) => setTimeout(r, 200 * 2 ** (n - 1)));
    }
  }
}

/** What the chain holds of one signature: unseen (never landed, or not yet), failed, or landed with what it took. */
export type TxFacts =
  | { kind: 'unseen' }
  | { kind: 'failed'; err: string }
  | { kind: 'landed'; feePayer: string; slot: number; taken: bigint };

interface TokenBalance { accountIndex: number; uiTokenAmount: { amount: string } }
interface TxAnswer {
  slot: number;
  transaction: { message: { accountKeys: (string | { pubkey: string })[] } };
  meta: { err: unknown; preTokenBalances?: TokenBalance[] | null; postTokenBalances?: TokenBalance[] | null } | null;
}

/** The tokens the transaction took out of accounts: the sum of every balance that fell. */
export function tokensTaken(meta: NonNullable<TxAnswer['meta']>): bigint {
  const before = new Map((meta.preTokenBalances ?? []).map((b) => [b.accountIndex, BigInt(b.uiTokenAmount.amount)]));
  let taken = 0n;
  for (const b of meta.postTokenBalances ?? []) {
    const drop = (before.get(b.accountIndex) ?? 0n) - BigInt(b.uiTokenAmount.amount);
    if (drop > 0n) taken += drop;
  }
  return taken;
}

function factsOf(answer: TxAnswer | null | RpcResponseError): TxFacts {
  if (answer instanceof RpcResponseError) throw answer;
  if (answer === null || answer.meta === null) return { kind: 'unseen' };
  if (answer.meta.err !== null && answer.meta.err !== undefined) return { kind: 'failed', err: JSON.stringify(answer.meta.err) };
  const first = answer.transaction.message.accountKeys[0];
  const feePayer = typeof first === 'string' ? first : first?.pubkey ?? '';
  return { kind: 'landed', feePayer, slot: answer.slot, taken: tokensTaken(answer.meta) };
}

/** getTransaction for each signature, 50 to a batch. */
export async function transactionFacts(c: ChainDeps, signatures: readonly string[]): Promise<Map<string, TxFacts>> {
  const out = new Map<string, TxFacts>();
  const unique = [...new Set(signatures)].filter((s) => s !== '');
  for (let i = 0; i < unique.length; i += 50) {
    const part = unique.slice(i, i + 50);
    const params = part.map((s) => [s, { encoding: 'json', commitment: c.commitment === 'processed' ? 'confirmed' : c.commitment, maxSupportedTransactionVersion: 0 }]);
    const facts = await withRetries(async () => (await c.rpc.batch<TxAnswer | null>('getTransaction', params)).map((a) => factsOf(a ?? null)));
    part.forEach((s, k) => out.set(s, facts[k] ?? { kind: 'unseen' }));
  }
  return out;
}

/** A policy account now: its payment count and, for pay-as-you-go, the period the program is in. */
export interface PolicyAccount { address: string; exists: boolean; paymentCount: number; period?: { start: number; total: bigint } }

export async function policyAccounts(c: ChainDeps, addresses: readonly string[]): Promise<Map<string, PolicyAccount>> {
  const out = new Map<string, PolicyAccount>();
  for (let i = 0; i < addresses.length; i += 100) {
    const part = addresses.slice(i, i + 100);
    const reads = await withRetries(() => readProgramAccounts(c.rpc, part, 'PaymentPolicy', { programId: c.programId, commitment: c.commitment }));
    for (const r of reads) {
      if (r.kind !== 'found') { out.set(r.address, { address: r.address, exists: false, paymentCount: 0 }); continue; }
      const t = asPolicyType(r.data['policy_type']);
      out.set(r.address, {
        address: r.address, exists: true, paymentCount: Number(r.data['payment_count']),
        ...(t.kind === 'PayAsYouGo' ? { period: { start: Number(t.current_period_start), total: BigInt(t.current_period_total) } } : {}),
      });
    }
  }
  return out;
}
