/**
 * The facilitator's three operations on the payment engine (engine.ts), the same engine
 * the middleware runs: verify checks without sending, settle sends and answers the JWT,
 * usage meters a request against a JWT. Answers follow the x402 v2 facilitator shapes
 * (isValid/invalidReason/payer; success/errorReason/transaction/network/payer) with
 * Tributary's additions (policy, jwt, paymentResponse).
 */
import type { PaymentEngine, UsageAnswer } from '../engine.js';
import { paymentPayloadFromJson } from '../payload.js';
import { fingerprintOf, paymentIdentifierOf, type PaymentIdentifiers } from '../payment-identifier.js';
import type { PaymentRequirement } from '../requirements.js';
import { schemeOf } from '../schemes/index.js';
import { invalid } from '../../../src/kernel/http/errors.js';

export interface VerifyAnswer { isValid: boolean; invalidReason?: string; payer?: string }
export interface SettleAnswer {
  success: boolean;
  errorReason?: string;
  transaction?: string;
  network: string;
  payer?: string;
  policy?: string;
  jwt?: string;
  expiresAt?: number;
  paymentResponse?: string;
}

export interface FacilitatorDeps { engine: PaymentEngine; identifiers: PaymentIdentifiers }

/** The resource the payer's proof names: the requirements' (the accepts entry the client answered). */
function resourceOf(r: PaymentRequirement): string {
  if (r.resource === undefined) throw invalid('paymentRequirements.resource is required: the payer\'s proof names the resource');
  return r.resource;
}

export async function verifyPayment(deps: FacilitatorDeps, scope: string, payloadJson: unknown, r: PaymentRequirement): Promise<VerifyAnswer> {
  const decoded = paymentPayloadFromJson(payloadJson);
  if (!decoded.ok) return { isValid: false, invalidReason: decoded.reason };
  const pid = paymentIdentifierOf(decoded.payment);
  if (pid !== undefined) await deps.identifiers.check(scope, pid, fingerprintOf(decoded.payment, r.id));
  const v = deps.engine.verify(decoded.payment, r, resourceOf(r));
  return v.ok ? { isValid: true, payer: v.payer } : { isValid: false, invalidReason: v.reason };
}

export async function settlePayment(deps: FacilitatorDeps, scope: string, payloadJson: unknown, r: PaymentRequirement): Promise<SettleAnswer> {
  const decoded = paymentPayloadFromJson(payloadJson);
  if (!decoded.ok) return { success: false, errorReason: decoded.reason, network: r.network };
  // the engine's one path, as the middleware's: every check (the proof included) before a stored answer is given
  const paid = await deps.engine.pay(decoded.payment, r, resourceOf(r), scope);
  if (!paid.ok) return { success: false, errorReason: paid.reason, network: r.network, ...(paid.payer ? { payer: paid.payer } : {}) };
  const s = paid.result;
  return {
    success: true, network: r.network, payer: paid.payer, ...(s.transaction ? { transaction: s.transaction } : {}),
    ...(s.policy ? { policy: s.policy } : {}), jwt: s.body.jwt, ...(s.expiresAt ? { expiresAt: s.expiresAt } : {}), paymentResponse: s.paymentResponse,
  };
}

/**
 * Admits a request of `amount` (default the requirement's price: payg's amount, prepaid's
 * pricePerRequest, drawn from the credit) against a JWT, or says why not. x402://upto (when every requirement is upto, or a settlement transaction is
 * sent): `amount` is the actual charge, checked against the authorization, and with
 * `transaction` (the merchant's signed execute_payment) settled on chain, once.
 */
export async function reportUsage(
  deps: FacilitatorDeps, token: string, requirements: readonly PaymentRequirement[], amount: bigint | undefined, transaction?: string,
): Promise<UsageAnswer> {
  const byId = new Map(requirements.map((r) => [r.id, r]));
  // the schemes whose usage report settles (x402://upto)
  const settling = requirements.filter((r) => schemeOf(r).report !== undefined);
  if (settling.length > 0 && (transaction !== undefined || settling.length === requirements.length)) {
    // without an amount, whether the bearer holds a live authorization that funds its maximum (a request admitted before its cost is known)
    if (amount === undefined && transaction !== undefined) throw invalid('amount is required with transaction: the actual charge, 0 to the authorized maximum');
    return deps.engine.report(token, (c) => byId.get(c.requirementId), amount, transaction);
  }
  if (transaction !== undefined) throw invalid('transaction is only for settling an x402://upto authorization');
  const grant = await deps.engine.authorize(token, (c) => byId.get(c.requirementId), amount);
  return typeof grant === 'string' ? { admitted: false, reason: grant } : { admitted: true, ...grant };
}
