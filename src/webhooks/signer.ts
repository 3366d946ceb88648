/**
 * Standard Webhooks (standardwebhooks.com): a secret `whsec_<base64>` per webhook, and on
 * every request the headers webhook-id (the event's identity: the same on every retry, so
 * receivers deduplicate on it), webhook-timestamp (unix seconds of this attempt) and
 * webhook-signature (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), computed by the
 * reference library, so any Standard Webhooks verifier accepts them.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';
/** 32 bytes: the spec asks for 24 to 64. */
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export interface SignedHeaders { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string }

export function signedHeaders(secret: string, msgId: string, nowMs: number, body: string): SignedHeaders {
  const at = new Date(Math.floor(nowMs / 1000) * 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(nowMs / 1000)),
    'webhook-signature': new Webhook(secret).sign(msgId, at, body),
  };
}
