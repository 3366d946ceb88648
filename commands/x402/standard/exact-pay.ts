/**
 * x402 `exact` on a resource sold in the standard wire (middleware.ts, `options.exact`): the
 * route offers one exact requirement (a TransferChecked of `amount` of `asset` to `payTo`,
 * the service's fee payer paying the network fee), first in its 402's accepts, and a
 * PAYMENT-SIGNATURE whose `accepted.scheme` is `exact` is verified and settled by the node's
 * exact facilitator (../exact/facilitator.ts), attributed to the resource's gateway. Exact is
 * paid per request: a settled payment serves the request itself (no JWT), its SettleResponse
 * in PAYMENT-RESPONSE.
 *
 * The payment is checked against the requirement this route offers, never against the
 * client's `accepted` alone: scheme, network, amount, asset and payTo must be the offered
 * ones, and `extra.feePayer` one of the service's fee payers (a payment built just before a
 * rotation still names the old one, which still co-signs).
 */
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { ExactFacilitator } from '../exact/facilitator.js';
import { REASONS } from '../exact/facilitator.js';

export interface ExactTerms {
  /** the price of one request, smallest token units */
  amount: bigint | number | string;
  /** the token mint */
  asset: string;
  /** the merchant wallet: the transfer goes to its associated token account */
  payTo: string;
  /** the gateway the settlement is recorded for (its webhooks, revenue and exports) */
  gateway: string;
  network: string;
  /** how long the payer's transaction is good for; default 60 */
  maxTimeoutSeconds?: number;
}

/** What the middleware needs to sell exact: the node's facilitator and the terms. */
export interface ExactOffer {
  facilitator: ExactFacilitator;
  terms: ExactTerms;
}

export type ExactOutcome =
  | { kind: 'paid'; settled: SettleResponse }
  | { kind: 'refused'; reason: string }
  /** sent and not yet confirmed (or in doubt): the same payment again later gets its answer */
  | { kind: 'pending'; reason: string };

/** The exact requirement the route offers now (the active fee payer), undefined where the facilitator does not support the network. */
export async function offeredExact(o: ExactOffer): Promise<PaymentRequirements | undefined> {
  const supported = await o.facilitator.supportedKind(o.terms.network);
  return supported && exactRequirement(o.terms, supported);
}

function exactRequirement(t: ExactTerms, supported: { kind: { extra?: Record<string, unknown> } }): PaymentRequirements {
  return {
    scheme: 'exact', network: t.network as PaymentRequirements['network'], amount: String(t.amount), asset: t.asset, payTo: t.payTo,
    maxTimeoutSeconds: t.maxTimeoutSeconds ?? 60, extra: { ...supported.kind.extra },
  };
}

const reasonOf = (code: string | undefined, message: string | undefined): string =>
  [code, message].filter((x) => x !== undefined && x !== '').join(': ') || 'the exact payment was refused';

/** Why `accepted` is not the offered requirement, or undefined when it is (fee payer: any of `signers`). */
function mismatch(accepted: PaymentRequirements, offered: PaymentRequirements, signers: readonly string[]): string | undefined {
  for (const k of ['network', 'amount', 'asset', 'payTo'] as const) {
    if (accepted[k] !== offered[k]) return `accepted.${k} is ${JSON.stringify(accepted[k])}; this resource's exact requirement has ${JSON.stringify(offered[k])}`;
  }
  const feePayer = accepted.extra?.['feePayer'];
  if (typeof feePayer !== 'string' || !signers.includes(feePayer)) return 'accepted.extra.feePayer is not a fee payer of this service; take the 402\'s accepts[0] again';
  return undefined;
}

/**
 * Verifies, then settles `payload` against the route's exact requirement, and claims the
 * settled transaction's one request (in the settlement's row: once across nodes, whatever
 * Redis lost), so a payment whose settlement was pending (a 503) is served when it is sent
 * again and has landed, and a payment served already is refused as a replay. A payment
 * settled for other terms (another merchant's, through the facilitator API: its row is never
 * served here) is refused: the client's `accepted` is unsigned and proves nothing.
 */
export async function payExact(o: ExactOffer, payload: PaymentPayload): Promise<ExactOutcome> {
  const supported = await o.facilitator.supportedKind(o.terms.network);
  const offered = supported && exactRequirement(o.terms, supported);
  if (!supported || !offered) return { kind: 'refused', reason: `this resource offers no exact payment on ${payload.accepted.network}` };
  const wrong = mismatch(payload.accepted, offered, supported.signers);
  if (wrong) return { kind: 'refused', reason: wrong };
  // the fee payer the payer built for (checked above): the facilitator co-signs as that one
  const r: PaymentRequirements = { ...offered, extra: { ...offered.extra, feePayer: payload.accepted.extra['feePayer'] } };
  const verified = await o.facilitator.verify(payload, r);
  // a payment settled already, or in flight: its settlement's answer decides below
  const seen = !verified.isValid && verified.invalidReason === REASONS.duplicate;
  if (!verified.isValid && !seen) return { kind: 'refused', reason: reasonOf(verified.invalidReason, verified.invalidMessage) };
  const settled = await o.facilitator.settle(payload, r, { gateway: o.terms.gateway });
  const reason = reasonOf(settled.errorReason, settled.errorMessage);
  if (settled.errorReason === REASONS.pending) return { kind: 'pending', reason };
  if (!settled.success) return { kind: 'refused', reason };
  const terms = { network: offered.network, gateway: o.terms.gateway, payTo: offered.payTo, asset: offered.asset, amount: offered.amount };
  if (!(await o.facilitator.serveOnce(settled.transaction, terms))) return { kind: 'refused', reason: `${REASONS.duplicate}: this payment was settled and served already; pay again` };
  return { kind: 'paid', settled };
}
