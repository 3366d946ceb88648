/**
 * Can a pull-scheme policy still be charged? x402://payg and x402://upto serve first and
 * take the money later (the settler's, or the merchant's, execute_payment), through the SPL
 * delegation the Payment transaction approved. A payer who revokes it, empties the account,
 * or simply keeps less in it than it uses, would be served every period up to the cap while
 * the charges are refused (NoDelegateSet, InsufficientDelegatedAmount, InsufficientBalance).
 * So admission asks the chain what the program will ask: the token account the user payment
 * names still delegates to the program (the user payment account, or the legacy payments
 * account), and how much it can still fund: the lesser of its balance and the delegated
 * amount, less the gateway's fee where the payer pays it on top (net mode, flag 0x02).
 * The meter admits a chunk only while the usage not yet charged, this chunk included, fits
 * in that (metering.ts).
 *
 * Reads: the user payment (for its token account), the token account and the gateway, kept
 * per user payment for `ttlMs` (X402_CACHE_MS): a burst of requests costs three RPC reads per
 * ttl. Staleness bound: a revocation or a withdrawal is seen by every node at most `ttlMs` later.
 * Several pay-as-you-go policies on one token account each see the whole balance.
 */
import { readProgramAccount, type AccountRead } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import { text } from '../../src/kernel/domain/event-data.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { decodeTokenAccountState } from '../../src/kernel/domain/spl-token.js';
import { programErrorByName } from '../../src/kernel/domain/program-errors.js';
import { paymentsDelegate } from './verify-token-ixs.js';

type Found = AccountRead & { kind: 'found' };

/** `NoDelegateSet (6008)`, as the settler and the scheduler name the program's refusals. */
const named = (name: string): string => {
  const e = programErrorByName(name);
  return e ? `${name} (${e.code})` : name;
};

const NET_AMOUNT_FLAG = 0x02;

/** What the payer's token account can still fund, in the policy's amounts (fees on top taken out), or why nothing. */
export type Funding =
  | { ok: true; amount: bigint; account: string; limitedBy: 'balance' | 'delegation' }
  | { ok: false; reason: string };

export interface Payability {
  funding(policy: Found): Promise<Funding>;
  /** why the policy's payer cannot be charged `amount` now (in the program's words), or undefined */
  problem(policy: Found, amount: bigint): Promise<string | undefined>;
  /** drops what this node knows of a user payment's funding (a Payment transaction just approved anew) */
  forget(userPayment: string): void;
}

/**
 * The most `gross` pays for when the program draws amount + floor(amount × bps / 10000)
 * (net mode; bps 0 otherwise): the largest such amount, exactly, since a maximum the
 * payer approved with its fee must be admitted.
 */
export function fundedBeforeFees(gross: bigint, bps: bigint): bigint {
  let a = (gross * 10_000n) / (10_000n + bps);
  // the estimate rounds down twice; the exact answer is at most a unit or two above
  while (a + 1n + ((a + 1n) * bps) / 10_000n <= gross) a += 1n;
  return a;
}

/** Why `amount` (with `unsettled` before it) is more than `f` funds, in the program's words. */
export function shortfall(f: Extract<Funding, { ok: true }>, amount: bigint, unsettled = 0n): string {
  const owed = unsettled > 0n ? ` on top of ${unsettled} used and not charged yet` : '';
  return f.limitedBy === 'delegation'
    ? `cannot be charged: the delegation of ${f.account} funds ${f.amount} more, this request costs ${amount}${owed} (${named('InsufficientDelegatedAmount')})`
    : `cannot be charged: the payer's token account ${f.account} funds ${f.amount} more, this request costs ${amount}${owed} (${named('InsufficientBalance')})`;
}

type Account = { ok: true; account: string; balance: bigint; delegated: bigint } | { ok: false; reason: string };

export function createPayability(opts: { rpc: RpcClient; programId: string; commitment: Commitment; ttlMs: number; clock: Clock; capacity?: number }): Payability {
  const legacy = paymentsDelegate(opts.programId);
  const readOpts = { programId: opts.programId, commitment: opts.commitment };
  const accounts = timedCache<Account>(opts, async (userPayment) => {
    const up = await readProgramAccount(opts.rpc, userPayment, 'UserPayment', readOpts);
    if (up.kind !== 'found') return { ok: false, reason: `cannot be charged: the policy's user payment ${userPayment} is gone` };
    if (up.data['is_active'] === false) return { ok: false, reason: `cannot be charged: the policy's user payment ${userPayment} is not active` };
    const account = text(up.data, 'token_account');
    const r = await opts.rpc.call<{ value: { data: [string, string] } | null }>('getAccountInfo', [account, { encoding: 'base64', commitment: opts.commitment }]);
    const s = r.value ? decodeTokenAccountState(Buffer.from(r.value.data[0], 'base64')) : undefined;
    if (!s) return { ok: false, reason: `cannot be charged: the payer's token account ${account} is gone` };
    if (s.delegate !== userPayment && s.delegate !== legacy) {
      return { ok: false, reason: `cannot be charged: the payer's token account ${account} no longer delegates to the program (${named('NoDelegateSet')}); approve it again` };
    }
    return { ok: true, account, balance: s.amount, delegated: s.delegatedAmount };
  });
  // net mode: the payer pays amount + floor(amount × fee_bps / 10000) on top
  const feesOnTop = timedCache<bigint>(opts, async (gateway) => {
    const gw = await readProgramAccount(opts.rpc, gateway, 'PaymentGateway', readOpts);
    if (gw.kind !== 'found' || (Number(gw.data['feature_flags'] ?? 0) & NET_AMOUNT_FLAG) === 0) return 0n;
    return BigInt(Number(gw.data['gateway_fee_bps'] ?? 0));
  });

  async function funding(policy: Found): Promise<Funding> {
    const [a, bps] = await Promise.all([accounts.get(text(policy.data, 'user_payment')), feesOnTop.get(text(policy.data, 'gateway'))]);
    if (!a.ok) return a;
    const limitedBy = a.delegated < a.balance ? 'delegation' : 'balance';
    const gross = limitedBy === 'delegation' ? a.delegated : a.balance;
    return { ok: true, account: a.account, limitedBy, amount: fundedBeforeFees(gross, bps) };
  }

  return {
    funding,
    async problem(policy, amount) {
      const f = await funding(policy);
      if (!f.ok) return f.reason;
      return f.amount < amount ? shortfall(f, amount) : undefined;
    },
    forget(userPayment) {
      accounts.forget(userPayment);
    },
  };
}

/** Reads kept `ttlMs` per key; concurrent misses of one key share one read. */
function timedCache<V>(opts: { ttlMs: number; clock: Clock; capacity?: number }, load: (key: string) => Promise<V>) {
  const cache = createLru<string, { at: number; value: V }>(opts.capacity ?? 50_000);
  const inflight = new Map<string, Promise<V>>();
  return {
    async get(key: string): Promise<V> {
      const hit = cache.get(key);
      if (hit && opts.clock.now() - hit.at < opts.ttlMs) return hit.value;
      const pending = inflight.get(key);
      if (pending) return pending;
      const started = opts.clock.now();
      const p = load(key).then((value) => {
        cache.set(key, { at: started, value });
        return value;
      }).finally(() => inflight.delete(key));
      inflight.set(key, p);
      return p;
    },
    forget(key: string): void {
      cache.delete(key);
    },
  };
}
