/** What the standard-wire tests share: a standard requirement back in SPEC's accepts form, as the payment builder takes it. */
import type { PaymentRequirements } from '@x402/core/types';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';

/** `resource`: the URL the proof names; default the requirement's extra.resource */
export function specForm(s: PaymentRequirements, resource?: string): AcceptedRequirement {
  const { programId, ...terms } = s.extra;
  return {
    ...terms, scheme: s.scheme, network: s.network, amount: Number(s.amount), recipient: s.payTo, tokenMint: s.asset,
    resource: resource ?? terms['resource'], extra: { programId: programId as string, x402Version: 2 },
  } as AcceptedRequirement;
}
