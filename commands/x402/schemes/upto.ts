/**
 * `x402://upto`: an authorization up to a maximum until a deadline (the program's UpTo
 * policy), single-use: each payment creates its own, and the merchant pulls the actual
 * amount once after serving (upto-settle.ts). A bearer is admitted while the payer can still
 * fund what would be pulled.
 */
import type { UptoRequirement } from '../requirements.js';
import { chainRead, servesWhileActive } from '../settle.js';
import { grantOf, policyScheme, servingPolicy } from './policy.js';

export const uptoScheme = policyScheme<UptoRequirement>({
  scheme: 'x402://upto',
  serving: servesWhileActive,
  // an upto authorization is single-use: each payment is a new one
  reusable: false,

  async admit(ctx, claims, r, chunk) {
    const read = await servingPolicy(ctx, claims, r, servesWhileActive);
    if (typeof read === 'string') return read;
    // served now, pulled by the merchant later (up to the maximum, or the amount it reports)
    // (an amount above the maximum is refused by name where it is settled)
    const pulled = chunk !== undefined && chunk < r.amount ? chunk : r.amount;
    const unpayable = await chainRead('getAccountInfo', () => ctx.payability.problem(read, pulled));
    return unpayable ? `the payment policy ${claims.policy} ${unpayable}` : grantOf(claims, r);
  },
});
