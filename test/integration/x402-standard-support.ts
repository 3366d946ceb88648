/** What the standard-wire tests share: a standard requirement back in SPEC's accepts form, as the payment builder takes it. */
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';

export function specForm(required: PaymentRequired, s: PaymentRequirements): AcceptedRequirement {
  const { programId, ...terms } = s.extra;
  return {
    ...terms, scheme: s.scheme, network: s.network, amount: Number(s.amount), recipient: s.payTo, tokenMint: s.asset,
    resource: required.resource.url, extra: { programId: programId as string, x402Version: 2 },
  } as AcceptedRequirement;
}
