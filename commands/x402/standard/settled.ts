/**
 * A Tributary settlement as the standard's SettleResponse (the PAYMENT-RESPONSE header's and
 * the facilitator's /settle answer's shape): `transaction` is the signature sent; Tributary's
 * facts (the policy, the requirement, the JWT's expiry) ride in `extra`.
 *
 * `transaction` is required by the standard. A payer who holds a matching policy already
 * sends none: then it is the signature `known` gives (the facilitator reads the policy's
 * last payment, or its creation, from the read model) or, when none is known, "" (the
 * standard's own value for "nothing was sent"); `extra.policy` always names the policy.
 */
import type { SettleResponse } from '@x402/core/types';
import type { SettledResult } from '../idempotency.js';
import { parseKeyValueHeader, type PaymentRequirement } from '../requirements.js';

export function standardSettlement(s: SettledResult, r: PaymentRequirement, known?: string): SettleResponse {
  // a result stored by an older node, or answered by a remote facilitator, has its facts in the Payment-Response text only
  const spec = parseKeyValueHeader(s.paymentResponse);
  const policy = s.policy ?? spec['policy'];
  const transaction = s.transaction ?? spec['transaction'] ?? known ?? '';
  return {
    success: true, transaction, network: r.network as SettleResponse['network'], ...(s.payer !== undefined ? { payer: s.payer } : {}),
    extra: {
      ...(policy !== undefined ? { policy } : {}), requirementId: r.id, scheme: r.scheme, created: s.transaction !== undefined || spec['transaction'] !== undefined,
      ...(s.expiresAt !== undefined ? { expiresAt: s.expiresAt } : {}),
    },
  };
}
