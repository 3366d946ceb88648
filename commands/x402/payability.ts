/**
 * Can a pull-scheme policy still be charged? x402://payg and x402://upto serve first and
 * take the money later (the settler's, or the merchant's, execute_payment), through the SPL
 * delegation the Payment transaction approved. A payer who revokes it, or empties the
 * account, after the policy is created would be served every period up to the cap while
 * each charge is refused (NoDelegateSet, InsufficientDelegatedAmount, InsufficientBalance),
 * so the bearer path asks the chain what the program will ask: the token account the user
 * payment names still delegates to the program (the user payment account, or the legacy
 * payments account) for at least this request, and holds it.
 *
 * Reads: the user payment (for its token account) and the token account, kept per user
 * payment for `ttlMs` (X402_CACHE_MS), so a burst of requests costs two RPC reads per ttl.
 * Staleness bound: a revocation is refused by every node at most `ttlMs` later.
 */
import { readProgramAccount, type AccountRead } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import { text } from '../../src/kernel/domain/event-data.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { decodeTokenAccountState, type TokenAccountState } from '../../src/kernel/domain/spl-token.js';
import { programErrorByName } from '../../src/kernel/domain/program-errors.js';
import { paymentsDelegate } from './verify-token-ixs.js';

type Found = AccountRead & { kind: 'found' };

/** `NoDelegateSet (6008)`, as the settler and the scheduler name the program's refusals. */
const named = (name: string): string => {
  const e = programErrorByName(name);
  return e ? `${name} (${e.code})` : name;
};
type Funding = { kind: 'account'; account: string; state: TokenAccountState } | { kind: 'missing'; why: string };

export interface Payability {
  /** why the policy's payer cannot be charged `amount` now (in the program's words), or undefined */
  problem(policy: Found, amount: bigint): Promise<string | undefined>;
  /** drops what this node knows of a user payment's funding (a Payment transaction just approved anew) */
  forget(userPayment: string): void;
}

export function createPayability(opts: { rpc: RpcClient; programId: string; commitment: Commitment; ttlMs: number; clock: Clock; capacity?: number }): Payability {
  const cache = createLru<string, { at: number; funding: Funding }>(opts.capacity ?? 50_000);
  const inflight = new Map<string, Promise<Funding>>();
  const legacy = paymentsDelegate(opts.programId);

  async function read(userPayment: string): Promise<Funding> {
    const up = await readProgramAccount(opts.rpc, userPayment, 'UserPayment', { programId: opts.programId, commitment: opts.commitment });
    if (up.kind !== 'found') return { kind: 'missing', why: `the policy's user payment ${userPayment} is gone` };
    if (up.data['is_active'] === false) return { kind: 'missing', why: `the policy's user payment ${userPayment} is not active` };
    const account = text(up.data, 'token_account');
    const r = await opts.rpc.call<{ value: { data: [string, string] } | null }>('getAccountInfo', [account, { encoding: 'base64', commitment: opts.commitment }]);
    const state = r.value ? decodeTokenAccountState(Buffer.from(r.value.data[0], 'base64')) : undefined;
    return state ? { kind: 'account', account, state } : { kind: 'missing', why: `the payer's token account ${account} is gone` };
  }

  async function funding(userPayment: string): Promise<Funding> {
    const hit = cache.get(userPayment);
    if (hit && opts.clock.now() - hit.at < opts.ttlMs) return hit.funding;
    const pending = inflight.get(userPayment);
    if (pending) return pending;
    const started = opts.clock.now();
    const p = read(userPayment).then((f) => {
      cache.set(userPayment, { at: started, funding: f });
      return f;
    }).finally(() => inflight.delete(userPayment));
    inflight.set(userPayment, p);
    return p;
  }

  return {
    async problem(policy, amount) {
      const userPayment = text(policy.data, 'user_payment');
      const f = await funding(userPayment);
      if (f.kind === 'missing') return `cannot be charged: ${f.why}`;
      const s = f.state;
      if (s.delegate !== userPayment && s.delegate !== legacy) {
        return `cannot be charged: the payer's token account ${f.account} no longer delegates to the program (${named('NoDelegateSet')}); approve it again`;
      }
      if (s.delegatedAmount < amount) {
        return `cannot be charged: the delegation of ${f.account} has ${s.delegatedAmount} left, this request costs ${amount} (${named('InsufficientDelegatedAmount')})`;
      }
      if (s.amount < amount) {
        return `cannot be charged: the payer's token account ${f.account} holds ${s.amount}, this request costs ${amount} (${named('InsufficientBalance')})`;
      }
      return undefined;
    },
    forget(userPayment) {
      cache.delete(userPayment);
    },
  };
}
