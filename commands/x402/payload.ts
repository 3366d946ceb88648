/**
 * The `Payment` request header: Base64 (standard alphabet, padding optional) of the JSON
 *
 *   {
 *     "x402Version": 2,
 *     "scheme": "deferred" | "x402://payg",
 *     "network": "<CAIP-2 id of the requirement>",
 *     "id": "<id of the requirement being paid, from the 402 body's accepts>",
 *     "payload": { "serializedTransaction": "<base64 of the signed Solana transaction>" }
 *   }
 *
 * The transaction (legacy or v0 without address lookup tables) is the one the Tributary
 * SDK builds (payment-transaction.ts): the payer's token account created idempotently when
 * missing, create_user_payment when the payer has none for the mint, create_payment_policy,
 * an SPL revoke + approve of the user payment PDA, and for `deferred` the first
 * execute_payment by the payer; optionally ComputeBudget instructions; signed by every
 * required signer (the payer at least). The server checks it against the requirement
 * (verify-transaction.ts), sends it and answers with a JWT.
 */
import { X402_VERSION, SCHEMES, type Scheme } from './requirements.js';

export interface PaymentPayload {
  x402Version: number;
  scheme: Scheme;
  network: string;
  id: string;
  payload: { serializedTransaction: string };
}

/** A Solana transaction is at most 1232 bytes; the header is its base64 plus a little JSON. */
export const MAX_PAYMENT_HEADER_LENGTH = 4096;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export type DecodedPayment = { ok: true; payment: PaymentPayload } | { ok: false; reason: string };

export function decodePaymentHeader(value: string): DecodedPayment {
  const text = value.trim();
  if (text.length > MAX_PAYMENT_HEADER_LENGTH) return { ok: false, reason: 'the Payment header is too long' };
  if (!BASE64.test(text)) return { ok: false, reason: 'the Payment header is not Base64' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    return { ok: false, reason: 'the Payment header does not decode to JSON' };
  }
  const p = json as Partial<PaymentPayload> | null;
  if (typeof p !== 'object' || p === null) return { ok: false, reason: 'the Payment payload is not an object' };
  if (p.x402Version !== X402_VERSION) return { ok: false, reason: `x402Version must be ${X402_VERSION}` };
  if (typeof p.scheme !== 'string' || !(SCHEMES as readonly string[]).includes(p.scheme)) {
    return { ok: false, reason: `scheme must be one of ${SCHEMES.join(', ')}` };
  }
  if (typeof p.network !== 'string' || typeof p.id !== 'string') return { ok: false, reason: 'network and id must be strings' };
  const tx = p.payload?.serializedTransaction;
  if (typeof tx !== 'string' || !BASE64.test(tx)) return { ok: false, reason: 'payload.serializedTransaction must be a Base64 string' };
  return { ok: true, payment: { x402Version: X402_VERSION, scheme: p.scheme, network: p.network, id: p.id, payload: { serializedTransaction: tx } } };
}

export function encodePaymentHeader(p: Omit<PaymentPayload, 'x402Version'>): string {
  const body: PaymentPayload = { x402Version: X402_VERSION, scheme: p.scheme, network: p.network, id: p.id, payload: p.payload };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64');
}
