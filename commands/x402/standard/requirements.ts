/**
 * A Tributary requirement in the x402 v2 standard form (PaymentRequirements of
 * @x402/core), and back:
 *
 *   scheme, network           as they are
 *   amount                    the requirement's amount, a decimal string
 *   asset                     tokenMint
 *   payTo                     recipient
 *   maxTimeoutSeconds         x402://upto: the longest authorization window; otherwise the
 *                             window of the payer's proof (PROOF_WINDOW_SECONDS): a payment
 *                             must reach the server within it
 *   extra                     every other term of the `accepts` entry (id, gateway, currency,
 *                             programId, resource, paymentFrequency, caps, maxChunkAmount,
 *                             pricePerRequest, ...), named as in SPEC.md's accepts
 *
 * The standard's resource is PaymentRequired.resource.url (and PaymentPayload.resource.url);
 * `extra.resource` repeats it because a standard scheme client (SchemeNetworkClient) is
 * given the requirement alone, and the payer's proof names the resource.
 */
import type { PaymentRequirements as StandardRequirement, PaymentRequired, ResourceInfo } from '@x402/core/types';
import { PROOF_WINDOW_SECONDS } from '../proof.js';
import { X402_VERSION, type AcceptedRequirement, type PaymentRequirementInput } from '../requirements.js';

export type { StandardRequirement };

/** The standard's maxTimeoutSeconds of a scheme without a window of its own: the payer's proof is good this long. */
export const STANDARD_TIMEOUT_SECONDS = PROOF_WINDOW_SECONDS;

/** An `accepts` entry (requirements.ts) in the standard form. */
export function standardRequirement(a: AcceptedRequirement): StandardRequirement {
  const { scheme, network, amount, recipient, tokenMint, extra, maxTimeoutSeconds, ...terms } = a;
  return {
    scheme, network: network as StandardRequirement['network'], amount: String(amount), asset: tokenMint, payTo: recipient,
    maxTimeoutSeconds: maxTimeoutSeconds ?? STANDARD_TIMEOUT_SECONDS, extra: { ...terms, programId: extra.programId },
  };
}

export interface ResourceDescription {
  /** what is sold; default the first requirement's description */
  description?: string;
  /** the media type of the paid answer; default application/json */
  mimeType?: string;
}

/** A 402's PaymentRequired: `accepts` in the order given (the preferred first), `error` the reason. */
export function standardPaymentRequired(
  accepts: readonly AcceptedRequirement[], url: string, error: string | undefined, d: ResourceDescription = {},
): PaymentRequired {
  const resource: ResourceInfo = { url, description: d.description ?? accepts[0]?.description ?? '', mimeType: d.mimeType ?? 'application/json' };
  return { x402Version: X402_VERSION, ...(error !== undefined ? { error } : {}), resource, accepts: accepts.map(standardRequirement) };
}

/** The requirement's terms the standard form keeps in `extra` (the facilitator's wire fields, requirements.ts). */
const TERMS = [
  'currency', 'description', 'memo', 'paymentFrequency', 'autoRenew', 'maxRenewals', 'gracePeriodSeconds', 'maxAmountPerPeriod',
  'periodLengthSeconds', 'maxChunkAmount', 'maxUnsettledAmount', 'minExpirySeconds', 'pricePerRequest',
] as const;

/** A facilitator request's requirement as the Tributary wire (facilitator/wire.ts) takes it: terms checked there. */
export type WireRequirement = PaymentRequirementInput & { id?: string; extra?: { programId?: string } };

/**
 * A standard requirement back in the Tributary wire form; `resource` is the URL the payer's
 * proof names. The terms are only picked here: normalizeRequirement checks them.
 */
export function wireRequirement(s: StandardRequirement, resource: string | undefined): WireRequirement {
  const extra = s.extra ?? {};
  const terms: Record<string, unknown> = {};
  for (const k of TERMS) if (extra[k] !== undefined) terms[k] = extra[k];
  const programId = extra['programId'];
  return {
    ...(terms as Partial<PaymentRequirementInput>),
    scheme: s.scheme as PaymentRequirementInput['scheme'], network: s.network, amount: s.amount, recipient: s.payTo, tokenMint: s.asset,
    gateway: extra['gateway'] as string,
    ...(s.scheme === 'x402://upto' ? { maxTimeoutSeconds: s.maxTimeoutSeconds } : {}),
    ...(typeof programId === 'string' ? { extra: { programId } } : {}),
    ...(resource !== undefined ? { resource } : {}),
  };
}
