/**
 * The x402 v2 standard transport's headers (specs/transports-v2/http.md), each base64 of
 * JSON, read and written with @x402/core's own codecs and checked with its zod schemas:
 *
 *   PAYMENT-REQUIRED   server → client with a 402: PaymentRequired {x402Version: 2, error?, resource, accepts, extensions?}
 *   PAYMENT-SIGNATURE  client → server: PaymentPayload {x402Version: 2, resource?, accepted, payload, extensions?}
 *   PAYMENT-RESPONSE   server → client with the paid answer: SettleResponse {success, transaction, network, payer?, ...}
 *
 * A Tributary payment inside a standard PaymentPayload: `payload` is the Tributary payload
 * object of payload.ts ({serializedTransaction, proof} or {payer, proof}) and `accepted` the
 * requirement paid in the standard form (requirements.ts here), whose `extra.id` names it.
 */
import {
  decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader,
} from '@x402/core/http';
import { PaymentPayloadV2Schema } from '@x402/core/schemas';
import type { PaymentPayload as StandardPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { paymentPayloadFromJson, type DecodedPayment } from '../payload.js';

export type { StandardPayload, PaymentRequired, SettleResponse };

/** The request header of the standard wire (SPEC.md's is `Payment`). */
export const PAYMENT_SIGNATURE = 'PAYMENT-SIGNATURE';
export const PAYMENT_REQUIRED = 'PAYMENT-REQUIRED';
export const PAYMENT_RESPONSE = 'PAYMENT-RESPONSE';

/**
 * A standard payload is the Tributary payload (a transaction of at most 1232 bytes) plus the
 * requirement it pays and the resource, all base64 once more: well under Node's 16 KiB of headers.
 */
export const MAX_SIGNATURE_HEADER_LENGTH = 8192;

export type DecodedStandard = { ok: true; payload: StandardPayload } | { ok: false; reason: string };

/** A PAYMENT-SIGNATURE header's PaymentPayload, or why it is not one. */
export function decodeSignatureHeader(value: string): DecodedStandard {
  const text = value.trim();
  if (text.length > MAX_SIGNATURE_HEADER_LENGTH) return { ok: false, reason: `the ${PAYMENT_SIGNATURE} header is too long` };
  let json: unknown;
  try {
    json = decodePaymentSignatureHeader(text);
  } catch (err) {
    const notJson = err instanceof SyntaxError;
    return { ok: false, reason: `the ${PAYMENT_SIGNATURE} header ${notJson ? 'does not decode to JSON' : 'is not Base64'}` };
  }
  return standardPayloadFromJson(json, PAYMENT_SIGNATURE);
}

/** `json` checked against @x402/core's PaymentPayload v2 schema; `where` names it in the reason. */
export function standardPayloadFromJson(json: unknown, where: string): DecodedStandard {
  const parsed = PaymentPayloadV2Schema.safeParse(json);
  if (parsed.success) return { ok: true, payload: parsed.data as StandardPayload };
  const issue = parsed.error.issues[0];
  const at = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, reason: `the ${where} is not an x402 v2 PaymentPayload (${at}${issue?.message ?? 'invalid'})` };
}

/**
 * The Tributary payment a standard PaymentPayload carries: scheme and network from
 * `accepted`, the requirement's id from `accepted.extra.id`, `payload` checked as payload.ts
 * checks a `Payment` header's.
 */
export function tributaryPayment(p: StandardPayload): DecodedPayment {
  const id = p.accepted.extra?.['id'];
  if (typeof id !== 'string' || id === '') {
    return { ok: false, reason: 'accepted.extra.id is required: the id of the requirement paid, as the 402\'s accepts[].extra.id gives it' };
  }
  return paymentPayloadFromJson({
    x402Version: p.x402Version, scheme: p.accepted.scheme, network: p.accepted.network, id, payload: p.payload,
    ...(p.extensions ? { extensions: p.extensions } : {}),
  });
}

export function encodeRequiredHeader(p: PaymentRequired): string {
  return encodePaymentRequiredHeader(p);
}

export function encodeResponseHeader(s: SettleResponse): string {
  return encodePaymentResponseHeader(s);
}
