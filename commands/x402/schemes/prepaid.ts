/**
 * `x402://prepaid`: a credit paid up front (the program's OneTime policy, executed in the
 * Payment transaction); each request draws its price from it (prepaid/credit.ts) until it is
 * used up. A paid credit with room left serves a payer who pays again.
 */
import { authorizeCredit, createdAt, creditLeft, creditPaid, creditTerms, giveBackDraw, recordedCredit, recordPaidCredit } from '../prepaid/credit.js';
import { policyTypeArgs } from '../program.js';
import { chainRead } from '../settle.js';
import { hashId, positive, RequirementError, type PrepaidRequirement } from '../requirements.js';
import { DUE_SKEW_SECONDS, grantOf, policyScheme } from './policy.js';

export const prepaidScheme = policyScheme<PrepaidRequirement>({
  scheme: 'x402://prepaid',
  serving: creditPaid,
  terms: creditTerms,

  requirement(input, base, head) {
    const fallback = base.amount / 100n > 0n ? base.amount / 100n : 1n;
    const pricePerRequest = positive(input.pricePerRequest, 'pricePerRequest', fallback);
    if (pricePerRequest > base.amount) throw new RequirementError('pricePerRequest exceeds amount (the credit paid up front)');
    const id = hashId([...head, pricePerRequest.toString()]);
    return { ...base, id, scheme: 'x402://prepaid', pricePerRequest };
  },

  // the credit, executed in the Payment transaction itself (a net-mode gateway's fee comes on top)
  allowance: (r) => ({ amount: r.amount, formula: 'the credit, paid in this transaction' }),

  // the credit, due at once and never expiring: the payer executes it in the same transaction
  policyType: (r) => policyTypeArgs.oneTime(r),
  feeOnTop: true,

  accepted: (r) => ({ pricePerRequest: Number(r.pricePerRequest) }),

  // the same transaction executes the credit: it falls due now and has not expired
  newPolicy(_r, type, nowSeconds) {
    if (type.kind !== 'OneTime') return undefined;
    if (BigInt(type.due_date) > BigInt(nowSeconds + DUE_SKEW_SECONDS)) return `the credit falls due at ${type.due_date}, not now`;
    if (type.expiry_date !== null && BigInt(type.expiry_date) < BigInt(nowSeconds)) return 'the credit\'s OneTime policy has already expired';
    return undefined;
  },
  firstPayment: { payment: 'a prepaid payment pays its credit', policy: 'a prepaid credit' },
  held: (policy) => `a paid credit ${policy} with room left`,
  // a paid credit serves as an existing policy only while it has room for a request, and (with a ledger) only
  // a credit bought through this service, or the policy the payment in hand created (credit.ts, creditLeft)
  usable: (ctx, r, policy, paying) => creditLeft(ctx.credits, policy, r, paying),
  // a credit with room left whose policy the payer closed (for its rent): still the payer's
  recorded: (ctx, r, payer) => recordedCredit(ctx.credits, payer, r),

  async settled(ctx, r, s, payer, paying) {
    // the credit is recorded before its JWT leaves: what it buys must outlive Redis and the policy account
    if (!s.policy) return;
    // an existing credit served again bought nothing: its row is there (creditLeft, recordedCredit). Only the
    // payment in hand is recorded: sent now, or found landed (its settlement retried after its record failed)
    if (s.transaction === undefined && s.policy !== paying) return;
    // which policy of its address was paid (the settlement has just read it: the cache holds it)
    const policy = s.policy;
    const read = await chainRead('getAccountInfo', () => ctx.credits.policies.get(policy));
    const created = read.kind === 'found' ? createdAt(read.data) : {};
    await recordPaidCredit(ctx.credits, {
      policy, payer, gateway: r.gateway, requirementId: r.id, credit: r.amount, ...(s.transaction ? { transaction: s.transaction } : {}), ...created,
    }, ctx.nowSeconds());
  },

  // the credit is the ledger's (or the chain's, read once): no policy read per request
  async admit(ctx, claims, r, chunk) {
    const drawn = await authorizeCredit(ctx.credits, claims, r, chunk, ctx.nowSeconds());
    return typeof drawn === 'string' ? drawn : { ...grantOf(claims, r), prepaid: drawn };
  },

  // a request that ended unanswered is not paid for: its draw is taken back (prepaid/credit.ts); a served one's row
  // recorded ahead becomes a draw once its process's served mark covers it (prepaid/ledger.ts)
  async answered(ctx, grant, served) {
    const requestId = grant.prepaid?.requestId;
    if (requestId === undefined) return;
    try {
      if (served) await ctx.credits.ledger?.servedUse(requestId);
      else await giveBackDraw(ctx.credits, requestId);
    } catch (err) {
      ctx.logger?.warn({ err: (err as Error).message, requestId, served }, 'prepaid request end not recorded');
    }
  },

  wireTerms: (r) => ({ pricePerRequest: r.pricePerRequest.toString() }),
});
