/**
 * `x402://payg`: pay as you go (the program's PayAsYouGo policy). The Payment transaction
 * creates the policy and approves the delegation, and pays nothing; each request is metered
 * (metering.ts) at the route's price within the policy's caps, served now and charged later
 * by the settler, and only while the payer's account funds what is not charged yet
 * (payability.ts), up to the requirement's maxUnsettledAmount.
 */
import { text } from '../../../src/kernel/domain/event-data.js';
import { asPolicyType, type PolicyType } from '../../../src/kernel/domain/policy-type.js';
import { upstreamUnavailable } from '../../../src/kernel/http/errors.js';
import { randomUUID } from 'node:crypto';
import { accountOutstandingKey } from '../account-outstanding.js';
import { giveBack } from '../meter-slices.js';
import { meterRequest, usageCounterKey } from '../metering.js';
import { shortfall } from '../payability.js';
import { hashId, PAYG_SETTLE_ALLOWANCE_SECONDS, positive, RequirementError, type PaygRequirement } from '../requirements.js';
import { cap, YEAR_SECONDS } from '../allowance.js';
import { policyTypeArgs } from '../program.js';
import { chainRead, servesWhileActive } from '../settle.js';
import { grantOf, policyScheme, servingPolicy } from './policy.js';

function terms(r: PaygRequirement, type: PolicyType): string | undefined {
  if (type.kind !== 'PayAsYouGo') return `the policy type is ${type.kind}; scheme x402://payg needs a PayAsYouGo policy`;
  if (type.max_amount_per_period !== r.maxAmountPerPeriod.toString()) {
    return `max_amount_per_period is ${type.max_amount_per_period}; the requirement asks ${r.maxAmountPerPeriod}`;
  }
  if (type.period_length_seconds !== r.periodLengthSeconds.toString()) {
    return `period_length_seconds is ${type.period_length_seconds}; the requirement asks ${r.periodLengthSeconds}`;
  }
  if (type.max_chunk_amount !== r.maxChunkAmount.toString()) return `max_chunk_amount is ${type.max_chunk_amount}; the requirement asks ${r.maxChunkAmount}`;
  return undefined;
}

/**
 * A pay-as-you-go policy being created must live at least `minExpirySeconds` (a period and
 * the time its last usage takes to be charged): usage served shortly before an expiry could
 * otherwise never be charged, since the program refuses execute_payment once it has passed.
 */
function paygExpiryProblem(expiry: string | null, minExpirySeconds: bigint, nowSeconds: number): string | undefined {
  if (expiry === null || BigInt(expiry) === 0n) return undefined;
  const earliest = BigInt(nowSeconds) + minExpirySeconds;
  if (BigInt(expiry) >= earliest) return undefined;
  return `the pay-as-you-go policy expires at ${expiry}, sooner than the requirement's minExpirySeconds (${minExpirySeconds}) from now allows (${earliest} at the earliest): usage near its end could not be charged`;
}

const serving = servesWhileActive;

export const paygScheme = policyScheme<PaygRequirement>({
  scheme: 'x402://payg',
  serving,
  terms,

  requirement(input, base, head) {
    const maxChunkAmount = positive(input.maxChunkAmount, 'maxChunkAmount', base.amount);
    const maxAmountPerPeriod = positive(input.maxAmountPerPeriod, 'maxAmountPerPeriod', base.amount * 100n);
    const periodLengthSeconds = positive(input.periodLengthSeconds, 'periodLengthSeconds', 86_400n);
    if (base.amount > maxChunkAmount) throw new RequirementError('amount (the price of one request) exceeds maxChunkAmount');
    if (maxChunkAmount > maxAmountPerPeriod) throw new RequirementError('maxChunkAmount exceeds maxAmountPerPeriod');
    const maxUnsettledAmount = positive(input.maxUnsettledAmount, 'maxUnsettledAmount', maxChunkAmount);
    if (maxUnsettledAmount < base.amount) throw new RequirementError('maxUnsettledAmount is below amount (the price of one request)');
    const minExpirySeconds = positive(input.minExpirySeconds, 'minExpirySeconds', periodLengthSeconds + BigInt(PAYG_SETTLE_ALLOWANCE_SECONDS));
    const id = hashId([...head, maxAmountPerPeriod.toString(), periodLengthSeconds.toString(), maxChunkAmount.toString()]);
    return { ...base, id, scheme: 'x402://payg', maxAmountPerPeriod, periodLengthSeconds, maxChunkAmount, maxUnsettledAmount, minExpirySeconds };
  },

  allowance: (r) => ({ amount: cap(r.maxAmountPerPeriod * (YEAR_SECONDS / r.periodLengthSeconds)), formula: 'SDK formula: max per period × periods per year' }),

  policyType: (r) => policyTypeArgs.payAsYouGo(r),

  accepted: (r) => ({
    maxAmountPerPeriod: Number(r.maxAmountPerPeriod), periodLengthSeconds: Number(r.periodLengthSeconds),
    maxChunkAmount: Number(r.maxChunkAmount), maxUnsettledAmount: Number(r.maxUnsettledAmount), minExpirySeconds: Number(r.minExpirySeconds),
  }),

  newPolicy: (r, type, nowSeconds) => (type.kind === 'PayAsYouGo' ? paygExpiryProblem(type.expiry_date, r.minExpirySeconds, nowSeconds) : undefined),

  // a policy serves as an existing one only while the payer can be charged (else the Payment transaction, with its approve, is sent)
  usable: async (ctx, r, policy) => (await ctx.payability.problem(policy, r.amount)) === undefined,

  async admit(ctx, claims, r, chunk) {
    const read = await servingPolicy(ctx, claims, r, { serving, terms });
    if (typeof read === 'string') return read;
    const type = asPolicyType(read.data['policy_type']);
    if (type.kind !== 'PayAsYouGo') return 'the payment policy is not pay-as-you-go';
    // served now, charged later: only while the payer's account can fund what is not charged yet
    const funding = await chainRead('getAccountInfo', () => ctx.payability.funding(read));
    if (!funding.ok) return `the payment policy ${claims.policy} ${funding.reason}`;
    const funds = {
      amount: funding.amount, exposure: r.maxUnsettledAmount,
      refuse: (c: bigint, unsettled: bigint) => `the payment policy ${claims.policy} ${shortfall(funding, c, unsettled)}`,
    };
    // with a ledger, the chunk is written to Postgres once Redis counted it, before the answer (the settler charges the ledger)
    const requestId = randomUUID();
    const ledger = ctx.usage ? { ledger: ctx.usage, requestId, gateway: r.gateway, userPayment: text(read.data, 'user_payment') } : undefined;
    let m: Awaited<ReturnType<typeof meterRequest>>;
    try {
      m = await meterRequest(ctx.redis, ctx.redisPrefix, claims.policy, type, chunk ?? r.amount, ctx.nowSeconds(), ledger, funds);
    } catch (err) {
      // the usage ledger (Postgres) or the counter (Redis) did not answer: nothing was admitted, so it is the
      // caller's to retry, as when the chain is unreachable (a 503, never a 500; the soak found it in a PostgreSQL restart)
      throw upstreamUnavailable(`pay-as-you-go metering is unavailable: ${(err as Error).message}`);
    }
    if (!m.ok) return m.reason;
    const metered = { chunk: m.chunk.toString(), periodTotal: m.periodTotal.toString(), periodLimit: m.periodLimit.toString(), periodEnd: Number(m.periodEnd) };
    // the ledger's row (a free request has none)
    return { ...grantOf(claims, r), metered: ledger && m.chunk > 0n ? { ...metered, requestId: m.requestId ?? requestId } : metered };
  },

  async answered(ctx, grant, served) {
    const requestId = grant.metered?.requestId;
    if (!ctx.usage || requestId === undefined) return;
    try {
      if (served) {
        await ctx.usage.served(requestId);
        return;
      }
      const row = await ctx.usage.unserved(requestId);
      if (!row) return;
      // this process counted it (the grant came from the script): taken back from the account's outstanding, and
      // from the period's counter while its slice is the last handed out (meter-slices.ts, giveBack)
      await giveBack(ctx.redis, usageCounterKey(ctx.redisPrefix, row.policy, row.periodStart), row.periodSliceEnd, row.chunk,
        row.userPayment ? accountOutstandingKey(ctx.redisPrefix, row.userPayment) : undefined);
    } catch (err) {
      ctx.logger?.warn({ err: (err as Error).message, requestId, served }, 'pay-as-you-go request end not recorded; its reservation is dropped at its bound');
    }
  },

  wireTerms: (r) => ({
    maxAmountPerPeriod: r.maxAmountPerPeriod.toString(), periodLengthSeconds: r.periodLengthSeconds.toString(), maxChunkAmount: r.maxChunkAmount.toString(),
  }),
});
