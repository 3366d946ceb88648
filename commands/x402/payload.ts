/**
 * The `Payment` request header: Base64 (standard alphabet, padding optional) of the JSON
 *
 *   {
 *     "x402Version": 2,
 *     "scheme": "deferred" | "x402://payg",
 *     "network": "<CAIP-2 id of the requirement>",
 *     "id": "<id of the requirement being paid, from the 402 body's accepts>",
 *     "payload": {
 *       "serializedTransaction": "<base64 of the signed Solana transaction>",
 *       "proof": { "signedAt": <unix seconds>, "signature": "<base58>" }   (proof.ts)
 *     }
 *   }
 *
 * or, for a payer who holds a matching Active policy already and sends no transaction,
 * "payload": { "payer": "<base58 wallet>", "proof": {...} } (the proof then signs "-"
 * in place of the transaction signature).
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
import type { PaymentProof } from './proof.js';

export interface PaymentPayload {
  x402Version: number;
  scheme: Scheme;
  network: string;
  id: string;
  payload: PaymentBody;
  /** x402 extensions the client attached; `payment-identifier` is honoured (payment-identifier.ts) */
  extensions?: Record<string, unknown>;
}

/** A transaction, or (no transaction) the payer; the proof is checked by the middleware, which names it when missing. */
export type PaymentBody =
  | { serializedTransaction: string; proof?: PaymentProof }
  | { payer: string; proof?: PaymentProof };

/** A Solana transaction is at most 1232 bytes; the header is its base64 plus a little JSON. */
export const MAX_PAYMENT_HEADER_LENGTH = 4096;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE58_KEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const BASE58_SIG = /^[1-9A-HJ-NP-Za-km-z]{64,90}$/;

function decodeProof(v: unknown): { ok: true; proof: PaymentProof | undefined } | { ok: false; reason: string } {
  if (v === undefined) return { ok: true, proof: undefined };
  if (typeof v !== 'object' || v === null) return { ok: false, reason: 'payload.proof must be an object {signedAt, signature}' };
  const p: Partial<PaymentProof> = v;
  if (typeof p.signedAt !== 'number' || !Number.isSafeInteger(p.signedAt)) return { ok: false, reason: 'payload.proof.signedAt must be an integer (unix seconds)' };
  if (typeof p.signature !== 'string' || !BASE58_SIG.test(p.signature)) return { ok: false, reason: 'payload.proof.signature must be a base58 ed25519 signature' };
  return { ok: true, proof: { signedAt: p.signedAt, signature: p.signature } };
}

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
  return paymentPayloadFromJson(json);
}

/** The checks of a payload as JSON: the Payment header's content, or a facilitator request's paymentPayload. */
export function paymentPayloadFromJson(json: unknown): DecodedPayment {
  const p = json as Partial<PaymentPayload> | null;
  if (typeof p !== 'object' || p === null) return { ok: false, reason: 'the Payment payload is not an object' };
  if (p.x402Version !== X402_VERSION) return { ok: false, reason: `x402Version must be ${X402_VERSION}` };
  if (typeof p.scheme !== 'string' || !(SCHEMES as readonly string[]).includes(p.scheme)) {
    return { ok: false, reason: `scheme must be one of ${SCHEMES.join(', ')}` };
  }
  if (typeof p.network !== 'string' || typeof p.id !== 'string') return { ok: false, reason: 'network and id must be strings' };
  const body = p.payload as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null) return { ok: false, reason: 'payload must be an object' };
  const proof = decodeProof(body['proof']);
  if (!proof.ok) return proof;
  const withProof = proof.proof ? { proof: proof.proof } : {};
  const ext = p.extensions;
  if (ext !== undefined && (typeof ext !== 'object' || ext === null || Array.isArray(ext))) return { ok: false, reason: 'extensions must be an object' };
  const head = { x402Version: X402_VERSION, scheme: p.scheme, network: p.network, id: p.id, ...(ext ? { extensions: ext } : {}) };
  const tx = body['serializedTransaction'];
  if (tx === undefined && body['payer'] !== undefined) {
    const payer = body['payer'];
    if (typeof payer !== 'string' || !BASE58_KEY.test(payer)) return { ok: false, reason: 'payload.payer must be a base58 public key' };
    return { ok: true, payment: { ...head, payload: { payer, ...withProof } } };
  }
  if (typeof tx !== 'string' || !BASE64.test(tx) || tx.length > MAX_PAYMENT_HEADER_LENGTH) {
    return { ok: false, reason: 'payload.serializedTransaction must be a Base64 string' };
  }
  return { ok: true, payment: { ...head, payload: { serializedTransaction: tx, ...withProof } } };
}

export function encodePaymentHeader(p: Omit<PaymentPayload, 'x402Version'>): string {
  const body: PaymentPayload = {
    x402Version: X402_VERSION, scheme: p.scheme, network: p.network, id: p.id, payload: p.payload, ...(p.extensions ? { extensions: p.extensions } : {}),
  };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64');
}
