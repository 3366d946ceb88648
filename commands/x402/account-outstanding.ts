/**
 * The usage not charged yet of one payer account, across its pay-as-you-go policies.
 *
 * A payer's account (its user payment: the token account and the delegation the program
 * charges through) can fund several pay-as-you-go policies, at several gateways. Each
 * policy's own check (metering.ts) sees only its own usage, so together they could admit
 * more than the account can pay. The meter's script therefore counts each admitted chunk
 * twice, atomically: in the policy's period counter and in the account's outstanding
 * (this key), and refuses a chunk that would take the account's outstanding past what it
 * can fund. The outstanding spans periods: usage of a period past and not charged yet still
 * draws on the account.
 *
 * It comes down when the usage leaves it: a charge that executed (the account paid it), a
 * charge or chunks found unbillable (never to be paid); release() is called by the settler
 * inside the Postgres transaction that records so, once per charge (a marker key), and
 * clamps at zero. A chunk the meter refused was never counted.
 *
 * Where it is kept if Redis dies: Postgres. The key is rebuilt from the ledger
 * (payg_usage.user_payment, its uncharged rows and those of charges in flight) when it is
 * missing, and it expires REBUILD_SECONDS after each rebuild whatever happens to it, so a
 * count that drifted (a rebuild racing an admission or a charge on another node counts a
 * chunk twice, or a release is lost with its process) is set right from the ledger again.
 * Every such race errs on the side of counting too much (refusing), except a charge
 * executed in Postgres between a rebuild's read and a release that then also applies: the
 * release is made before the transaction commits, so that window is the commit itself.
 */
import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../../infra/redis/scripts.js';

/** How long an account's outstanding lives after it was rebuilt from the ledger. */
export const REBUILD_SECONDS = 600;
/** How long a release's marker is kept: a charge is recorded executed within that, or never. */
const MARKER_SECONDS = 86_400;

/** The Redis key of one account's outstanding. */
export function accountOutstandingKey(keyPrefix: string, userPayment: string): string {
  return `${keyPrefix}x402:outstanding:${userPayment}`;
}

/**
 * The Redis key of one account's position: every chunk ever counted in its outstanding, never
 * released; each chunk holds the slice of it it was counted at (meter-slices.ts). It lives and
 * is rebuilt with the outstanding.
 */
export function accountPositionKey(keyPrefix: string, userPayment: string): string {
  return `${keyPrefix}x402:outstanding-position:${userPayment}`;
}

/** What left the outstanding of one account. */
export interface Released { userPayment: string; amount: bigint }

/**
 * Takes usage out of the accounts' outstanding; `once` names the release (a charge's id) so
 * that recording the same charge again (a settler retrying after a failed commit) takes it
 * out once.
 */
export type ReleaseOutstanding = (released: readonly Released[], once?: string) => Promise<void>;

/**
 * KEYS[1]     the release's marker ('' key name: none), KEYS[2..] the accounts' outstanding
 * ARGV[1]     the marker's lifetime (seconds); ARGV[2..] the amount released from each count
 * A count Redis no longer has is left alone: its rebuild reads the ledger.
 * Returns 1 when applied, 0 when the marker says it was already.
 */
export const RELEASE_SCRIPT = luaScript<number>('tributaryReleaseOutstanding', `
if KEYS[1] ~= '' and not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('DECRBY', KEYS[i], ARGV[i]) < 0 then redis.call('SET', KEYS[i], '0', 'KEEPTTL') end
  end
end
return 1
`);

export function createRelease(redis: Redis, keyPrefix: string): ReleaseOutstanding {
  return async (released, once) => {
    const some = released.filter((r) => r.amount > 0n);
    if (some.length === 0) return;
    const marker = once ? `${keyPrefix}x402:outstanding-released:${once}` : '';
    await runScript(redis, RELEASE_SCRIPT, [marker, ...some.map((r) => accountOutstandingKey(keyPrefix, r.userPayment))], [MARKER_SECONDS, ...some.map((r) => r.amount.toString())]);
  };
}
