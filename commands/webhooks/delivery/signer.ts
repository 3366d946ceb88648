/**
 * Standard Webhooks (standardwebhooks.com): a secret `whsec_<base64>` per webhook, and on
 * every request the headers webhook-id (the event's identity: the same on every retry, so
 * receivers deduplicate on it), webhook-timestamp (unix seconds of this attempt) and
 * webhook-signature (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`). While a rotated
 * secret is in its grace period the header carries one signature per secret, separated by
 * spaces, as the specification allows: receivers holding either secret verify.
 *
 * Signing is on the hot path: a worker opens and decodes a secret once (./secret-keys.ts),
 * and one HMAC per secret and attempt is the whole cost.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** 32 bytes: the spec asks for 24 to 64. */
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

// a type, not an interface: passed as the headers of a request (Record<string, string>)
export type SignedHeaders = { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };

/** The HMAC key of a `whsec_` secret. */
export const secretKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

/** Signs with decoded keys (secretKey; a worker keeps them, ./secret-keys.ts); `body` as text or its UTF-8 bytes. */
export function signWithKeys(keys: readonly Buffer[], msgId: string, nowMs: number, body: string | Buffer): SignedHeaders {
  const ts = String(Math.floor(nowMs / 1000));
  const prefix = `${msgId}.${ts}.`;
  const signatures = keys.map((k) => `v1,${createHmac('sha256', k).update(prefix).update(body).digest('base64')}`);
  return { 'webhook-id': msgId, 'webhook-timestamp': ts, 'webhook-signature': signatures.join(' ') };
}

export function signedHeaders(secrets: string | readonly string[], msgId: string, nowMs: number, body: string): SignedHeaders {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return signWithKeys(list.map(secretKey), msgId, nowMs, body);
}
