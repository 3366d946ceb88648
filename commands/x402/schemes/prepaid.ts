/**
 * `x402://prepaid`: a credit paid up front (the program's OneTime policy, executed in the
 * Payment transaction); each request draws its price from it (prepaid/credit.ts) until it is
 * used up. A paid credit with room left serves a payer who pays again.
 */
import { authorizeCredit, creditLeft, creditPaid, recordPaidCredit } from '../prepaid/credit.js';
import type { PrepaidRequirement } from '../requirements.js';
import { grantOf, policyScheme } from './policy.js';

export const prepaidScheme = policyScheme<PrepaidRequirement>({
  scheme: 'x402://prepaid',
  serving: creditPaid,
  firstPayment: { payment: 'a prepaid payment pays its credit', policy: 'a prepaid credit' },
  held: (policy) => `a paid credit ${policy} with room left`,
  // a paid credit serves as an existing policy only while it has room for a request
  usable: (ctx, r, policy) => creditLeft(ctx.credits, policy.address, r),

  async settled(ctx, r, s, payer) {
    // the credit is recorded before its JWT leaves: what it buys must outlive Redis and the policy account
    if (!s.policy) return;
    await recordPaidCredit(ctx.credits, {
      policy: s.policy, payer, gateway: r.gateway, requirementId: r.id, credit: r.amount, ...(s.transaction ? { transaction: s.transaction } : {}),
    }, ctx.nowSeconds());
  },

  // the credit is the ledger's (or the chain's, read once): no policy read per request
  async admit(ctx, claims, r, chunk) {
    const drawn = await authorizeCredit(ctx.credits, claims, r, chunk, ctx.nowSeconds());
    return typeof drawn === 'string' ? drawn : { ...grantOf(claims, r), prepaid: drawn };
  },

  wireTerms: (r) => ({ pricePerRequest: r.pricePerRequest.toString() }),
});
