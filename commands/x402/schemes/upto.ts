/**
 * `x402://upto`: an authorization up to a maximum until a deadline (the program's UpTo
 * policy), single-use: each payment creates its own, and the merchant pulls the actual
 * amount once after serving, by a usage report (upto-settle.ts). A bearer is admitted while the payer can still
 * fund what would be pulled.
 */
import type { PolicyType, UpToType } from '../../../src/kernel/domain/policy-type.js';
import { hashId, positive, UPTO_START_SKEW_SECONDS, type UptoRequirement } from '../requirements.js';
import { policyTypeArgs } from '../program.js';
import { chainRead, servesWhileActive } from '../settle.js';
import { settledUpto, settleUpto } from '../upto-settle.js';
import { holdsProblem } from '../upto-holds.js';
import { DUE_SKEW_SECONDS, grantOf, policyScheme, servingPolicy } from './policy.js';

function terms(r: UptoRequirement, type: PolicyType): string | undefined {
  if (type.kind !== 'UpTo') return `the policy type is ${type.kind}; scheme x402://upto needs an UpTo policy`;
  if (type.max_amount !== r.amount.toString()) return `max_amount is ${type.max_amount}; the requirement asks ${r.amount}`;
  return undefined;
}

/**
 * An UpTo authorization being created: usable from (about) now, its deadline ahead and no
 * further than the requirement's longest window. The deadline bounds the JWT too.
 */
function uptoWindowProblem(type: UpToType, maxTimeoutSeconds: bigint, nowSeconds: number): string | undefined {
  const now = BigInt(nowSeconds);
  const validAfter = BigInt(type.valid_after);
  const deadline = BigInt(type.deadline);
  if (validAfter > now + BigInt(DUE_SKEW_SECONDS)) return `the authorization starts at ${validAfter}, not now`;
  if (deadline <= now) return `the authorization's deadline ${deadline} has passed`;
  if (deadline <= validAfter) return 'the deadline is not after valid_after';
  if (deadline > now + maxTimeoutSeconds + BigInt(DUE_SKEW_SECONDS)) {
    return `the deadline ${deadline} is more than maxTimeoutSeconds (${maxTimeoutSeconds}) ahead`;
  }
  return undefined;
}

const serving = servesWhileActive;

export const uptoScheme = policyScheme<UptoRequirement>({
  scheme: 'x402://upto',
  serving,
  terms,
  // an upto authorization is single-use: each payment is a new one
  reusable: false,

  requirement(input, base, head) {
    const maxTimeoutSeconds = positive(input.maxTimeoutSeconds, 'maxTimeoutSeconds', 3600n);
    const id = hashId([...head, maxTimeoutSeconds.toString()]);
    return { ...base, id, scheme: 'x402://upto', maxTimeoutSeconds };
  },

  // the authorized maximum, settled once
  allowance: (r) => ({ amount: r.amount, formula: 'the authorized maximum' }),

  // the window the 402 answer offered, or one from now of maxTimeoutSeconds
  policyType(r, a) {
    const validAfter = a.validAfter ?? Math.floor(Date.now() / 1000);
    return policyTypeArgs.upTo(r, { validAfter, deadline: a.deadline ?? validAfter + (a.maxTimeoutSeconds ?? 3600) });
  },
  feeOnTop: true,

  accepted(r, nowSeconds) {
    const window = Number(r.maxTimeoutSeconds);
    // the chain's clock is the time its current slot started, behind ours by up to a slot (and any skew):
    // a window that starts "now" by our clock could make an immediate settlement PaymentNotDue
    const validAfter = nowSeconds - UPTO_START_SKEW_SECONDS;
    return { maxAmount: Number(r.amount), maxTimeoutSeconds: window, validAfter, deadline: nowSeconds + window };
  },

  newPolicy: (r, type, nowSeconds) => (type.kind === 'UpTo' ? uptoWindowProblem(type, r.maxTimeoutSeconds, nowSeconds) : undefined),

  // a hold on the payer's balance until settled: sent only while the balance covers it on top of its open ones (upto-holds.ts)
  fundsProblem: (ctx, r, p) => holdsProblem(ctx.chain, p.payer, r.tokenMint, r.amount, ctx.nowSeconds()),

  async admit(ctx, claims, r, chunk) {
    const read = await servingPolicy(ctx, claims, r, { serving, terms });
    if (typeof read === 'string') return read;
    // served now, pulled by the merchant later (up to the maximum, or the amount it reports)
    // (an amount above the maximum is refused by name where it is settled)
    const pulled = chunk !== undefined && chunk < r.amount ? chunk : r.amount;
    const unpayable = await chainRead('getAccountInfo', () => ctx.payability.problem(read, pulled));
    return unpayable ? `the payment policy ${claims.policy} ${unpayable}` : grantOf(claims, r);
  },

  report: settleUpto,
  settledReport: (ctx, claims, r, amount, transaction) => settledUpto(ctx, grantOf(claims, r), amount, transaction),
});
