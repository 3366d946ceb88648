/**
 * The six filters of /v1/subscriptions, /v1/payment-policies and /v1/composable-policies
 * (SPEC "Subscriptions and policies"), resolved into conditions on the policy read model.
 * Rules, each broken one a 400:
 *   - at least one of the six, at most three, counting only those the request names;
 *   - walletPublicKey requires an explicit tokenMint: the wallet's user payment is the
 *     PDA("user_payment", wallet, mint), so the mint must be the client's, not a default;
 *   - every key is a base58 32-byte public key; trackingId is non-empty and fits its memo
 *     (64 UTF-8 bytes; 32 on composable policies), matched through that exact encoding.
 * Meanings: userPublicKey is the user's owner wallet on /v1/subscriptions and the user
 * payment account on the other two; walletPublicKey is always a wallet.
 * The default mint: when tokenMint is omitted, every list is restricted to the default
 * stablecoin's mint (config.solana.defaultStablecoin). The default is not a filter the
 * client named, so it counts toward neither limit.
 */
import { invalid } from '../../src/kernel/http/errors.js';
import { isPublicKey, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { trackingIdToMemo } from '../../src/kernel/domain/memo.js';

export const FILTER_NAMES = ['gatewayPublicKey', 'recipient', 'tokenMint', 'trackingId', 'userPublicKey', 'walletPublicKey'] as const;
export type FilterName = (typeof FILTER_NAMES)[number];
export type FilterQuery = Partial<Record<FilterName, string>>;

export type ListEndpoint = 'subscriptions' | 'payment-policies' | 'composable-policies';

export interface PolicyFilter {
  gateway?: string;
  recipient?: string;
  tokenMint: string;
  /** whether tokenMint was the default rather than the client's */
  defaultMint: boolean;
  owner?: string;
  /** user payment accounts the policy must belong to (all of them: two different ones match nothing) */
  userPayments: string[];
  memo?: Buffer;
  subscriptionsOnly: boolean;
}

const KEY_FILTERS: readonly FilterName[] = ['gatewayPublicKey', 'recipient', 'tokenMint', 'userPublicKey', 'walletPublicKey'];

export function resolveFilters(q: FilterQuery, endpoint: ListEndpoint, deps: { defaultMint: string; pda: PdaDeriver }): PolicyFilter {
  const named = FILTER_NAMES.filter((n) => q[n] !== undefined);
  if (named.length === 0) throw invalid(`at least one filter is required: ${FILTER_NAMES.join(', ')}`);
  if (named.length > 3) throw invalid(`at most three filters may be combined; got ${named.length} (${named.join(', ')})`);
  for (const n of KEY_FILTERS) {
    const v = q[n];
    if (v !== undefined && !isPublicKey(v)) throw invalid(`${n} is not a base58 public key of 32 bytes`);
  }
  if (q.walletPublicKey !== undefined && q.tokenMint === undefined) {
    throw invalid('walletPublicKey requires tokenMint (the wallet\'s user payment is derived from the wallet and the mint)');
  }
  const memoBytes = endpoint === 'composable-policies' ? 32 : 64;
  let memo: Buffer | undefined;
  if (q.trackingId !== undefined) {
    memo = trackingIdToMemo(q.trackingId, memoBytes);
    if (!memo) throw invalid(`trackingId must be 1 to ${memoBytes} UTF-8 bytes (its memo encoding on ${endpoint === 'composable-policies' ? 'composable policies' : 'payment policies'})`);
  }
  const tokenMint = q.tokenMint ?? deps.defaultMint;
  const userPayments: string[] = [];
  let owner: string | undefined;
  if (q.userPublicKey !== undefined) {
    if (endpoint === 'subscriptions') owner = q.userPublicKey;
    else userPayments.push(q.userPublicKey);
  }
  if (q.walletPublicKey !== undefined) userPayments.push(deps.pda.userPayment(q.walletPublicKey, tokenMint));
  return {
    ...(q.gatewayPublicKey !== undefined ? { gateway: q.gatewayPublicKey } : {}),
    ...(q.recipient !== undefined ? { recipient: q.recipient } : {}),
    tokenMint,
    defaultMint: q.tokenMint === undefined,
    ...(owner !== undefined ? { owner } : {}),
    userPayments,
    ...(memo !== undefined ? { memo } : {}),
    subscriptionsOnly: endpoint === 'subscriptions',
  };
}
