/**
 * The bearer path and the settlement of x402://prepaid (the program's OneTime policy, see
 * the README's "The schemes"): the payer paid a credit up front in its Payment transaction,
 * and each request's cost is drawn from it until it is used up.
 *
 *   creditOf        the credit a JWT's policy bought: the ledger's row; without a ledger, the
 *                   chain's OneTime policy (Completed, paid, the requirement's terms)
 *   authorizeCredit the JWT's credit admits one request of `chunk` (default pricePerRequest)
 *   creditLeft      room for one more request (a paid credit serves as an existing policy)
 *   recordedCredit  a credit of the payer's with room left, its policy account closed or not
 *   giveBackDraw    a request that ended unanswered: its draw taken back
 *   recordPaidCredit the ledger's row of a settled credit, before its JWT leaves; an address paid
 *                   again (its policy created anew) counts each payment (ledger.ts, recordCredit)
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { asPolicyType, type PolicyStatus, type PolicyType } from '../../../src/kernel/domain/policy-type.js';
import type { PolicyCache } from '../policy-cache.js';
import type { PrepaidRequirement } from '../requirements.js';
import { chainRead, policyMismatch } from '../settle.js';
import type { X402Claims } from '../tokens.js';
import type { CreditLedger, PaidCredit } from './ledger.js';
import { creditUsed, drawCredit, openCounter, prepaidCounterKey } from './meter.js';
import { counterUsed, giveBack } from '../meter-slices.js';

export interface CreditDeps {
  redis: Redis;
  redisPrefix: string;
  policies: PolicyCache;
  ledger?: CreditLedger;
}

/** A credit is paid once its OneTime policy has executed, and that execution completes it. */
export const creditPaid = (status: PolicyStatus, paymentCount: number): string | undefined =>
  (status !== 'Completed' || paymentCount < 1 ? 'has not paid its credit' : undefined);

/** Why a policy type is not the requirement's credit (a OneTime policy of its amount), or undefined. */
export function creditTerms(r: PrepaidRequirement, type: PolicyType): string | undefined {
  if (type.kind !== 'OneTime') return `the policy type is ${type.kind}; scheme x402://prepaid needs a OneTime policy (the credit)`;
  if (type.amount !== r.amount.toString()) return `the credit (the OneTime amount) is ${type.amount}; the requirement asks ${r.amount}`;
  return undefined;
}

/** What one admitted request drew from a credit. */
export interface CreditGrant { chunk: string; used: string; credit: string; remaining: string; requestId?: string }

export async function creditOf(
  d: CreditDeps, policy: string, payer: string, r: PrepaidRequirement, fresh = false,
): Promise<bigint | string> {
  const row = await d.ledger?.credit(policy, { fresh });
  if (row) {
    // the row outlives the policy account (the payer may close a completed policy for its rent)
    if (row.payer !== payer || row.requirementId !== r.id) return `the credit ${policy} was bought by another payer or under other terms`;
    return row.credit;
  }
  // every credit this service sold has its row before its JWT leaves (schemes/prepaid.ts, settled): a OneTime
  // policy it has no row of was paid elsewhere (an invoice of the same amount), and buys nothing here
  if (d.ledger) return `the payment policy ${policy} is not a prepaid credit bought through this service`;
  const read = await chainRead('getAccountInfo', () => d.policies.get(policy));
  if (read.kind !== 'found') return `the payment policy ${policy} no longer exists`;
  const mismatch = policyMismatch(read, r, { serving: creditPaid, terms: (type) => creditTerms(r, type) });
  if (mismatch) return `the payment policy ${policy} ${mismatch}`;
  const t = asPolicyType(read.data['policy_type']);
  return t.kind === 'OneTime' ? BigInt(t.amount) : 'the payment policy is not a prepaid credit';
}

/** A policy account's created_at (unix s), which tells apart the policies of one address (recordCredit). */
export function createdAt(data: Record<string, unknown>): { policyCreatedAt?: string } {
  const v = data['created_at'];
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? { policyCreatedAt: String(v) } : {};
}

/** Records a credit just settled; a credit seen for the first time gets its counter opened at zero. */
export async function recordPaidCredit(d: CreditDeps, c: PaidCredit, nowSeconds: number): Promise<void> {
  const ledger = d.ledger;
  if (!ledger) return;
  // a credit bought anew at its address under other terms starts from what was drawn there: the counter's
  // position (slices handed out, some perhaps not written yet) or the ledger's, the higher
  const usedNow = async (): Promise<bigint> => {
    const [counted, written] = await Promise.all([counterUsed(d.redis, prepaidCounterKey(d.redisPrefix, c.policy)), ledger.used(c.policy)]);
    return counted !== undefined && counted > written ? counted : written;
  };
  if (await ledger.recordCredit(c, usedNow)) await openCounter(d.redis, d.redisPrefix, c.policy, nowSeconds);
}

export async function authorizeCredit(
  d: CreditDeps, claims: X402Claims, r: PrepaidRequirement, chunk: bigint | undefined, nowSeconds: number,
): Promise<CreditGrant | string> {
  let credit = await creditOf(d, claims.policy, claims.sub, r);
  // what this node kept of the credit may be older than a payment of its address since (recordCredit)
  if (typeof credit === 'string' && d.ledger) credit = await creditOf(d, claims.policy, claims.sub, r, true);
  if (typeof credit === 'string') return credit;
  const requestId = randomUUID();
  const cost = chunk ?? r.pricePerRequest;
  const draw = (limit: bigint) => drawCredit(d.redis, d.redisPrefix, claims.policy, limit, cost, nowSeconds, d.ledger, { requestId, gateway: r.gateway });
  let drawn = await draw(credit);
  if (!drawn.ok && drawn.usedUp && d.ledger) {
    const now = await creditOf(d, claims.policy, claims.sub, r, true);
    if (typeof now === 'string') return now;
    if (now > credit) drawn = await draw(credit = now);
  }
  if (!drawn.ok) return drawn.reason;
  const grant: CreditGrant = { chunk: cost.toString(), used: drawn.used.toString(), credit: credit.toString(), remaining: drawn.remaining.toString() };
  return d.ledger ? { ...grant, requestId: drawn.requestId ?? requestId } : grant;
}

/**
 * A request that drew from a credit and ended unanswered (its upstream failed or hung, its client
 * left before the answer began): the payer does not pay for it. Its row is taken back, then its
 * cost given back to the credit's counter (meter-slices.ts, giveBack): moved back while its slice
 * is the last the counter handed out, else kept as a hole the next draw that fits takes first.
 * Only with a ledger: without one the grant carries no request id.
 */
export async function giveBackDraw(d: CreditDeps, requestId: string): Promise<void> {
  const row = await d.ledger?.unservedUse(requestId);
  if (!row) return;
  await giveBack(d.redis, prepaidCounterKey(d.redisPrefix, row.policy), row.sliceEnd, row.amount);
}

/**
 * Whether a paid credit, bought under this requirement, still has room for one request at its price.
 * With a ledger the policy must be a credit it recorded (bought through this service), the very policy
 * at that address (its created_at), unless it is `paying`: the policy the Payment transaction in hand
 * creates, found landed (its settlement retried after its record failed). Any other OneTime policy of the
 * credit's amount and recipient (an invoice paid outside x402) is not a credit: the chain cannot tell.
 */
export async function creditLeft(
  d: CreditDeps, found: { address: string; data: Record<string, unknown> }, r: PrepaidRequirement, paying?: string,
): Promise<boolean> {
  const policy = found.address;
  const row = await d.ledger?.credit(policy, { fresh: true });
  if (d.ledger && policy !== paying) {
    if (!row) return false;
    const onChain = createdAt(found.data).policyCreatedAt;
    if (row.policyCreatedAt !== undefined && onChain !== undefined && row.policyCreatedAt !== onChain) return false;
  }
  return room(d, policy, r, row);
}

/**
 * A credit of `payer` recorded under this requirement with room for a request, its policy account closed
 * or not (the payer may close a completed policy for its rent, and the credit outlives it): its address.
 * Without a ledger there is no such record.
 */
export async function recordedCredit(d: CreditDeps, payer: string, r: PrepaidRequirement): Promise<string | undefined> {
  if (!d.ledger) return undefined;
  for (const policy of await d.ledger.creditsOf(payer, r.id, RECORDED_SCAN)) {
    const row = await d.ledger.credit(policy, { fresh: true });
    if (row && row.payer === payer && row.gateway === r.gateway && (await room(d, policy, r, row))) return policy;
  }
  return undefined;
}

/** How many of a payer's newest credits under one requirement are searched for one with room left. */
export const RECORDED_SCAN = 100;

async function room(d: CreditDeps, policy: string, r: PrepaidRequirement, row: PaidCredit | undefined): Promise<boolean> {
  // bought under other terms (another price per request): authorizeCredit refuses every draw under
  // these, so it cannot stand in for a new credit
  if (row && row.requirementId !== r.id) return false;
  const used = await creditUsed(d.redis, d.redisPrefix, policy, d.ledger);
  // the credit at this address: every payment made there (recordCredit), the requirement's amount before any is recorded
  return (row?.credit ?? r.amount) - used >= r.pricePerRequest;
}
