/**
 * What a client may subscribe to: a trackingId is a payment policy's memo as text, so it
 * is non-empty and fits the memo's 64 bytes of UTF-8 (a longer one could never match).
 */
import { PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export function checkTrackingId(v: unknown): Checked<string> {
  if (typeof v !== 'string') return { ok: false, message: 'trackingId must be a string' };
  if (v.length === 0) return { ok: false, message: 'trackingId must not be empty' };
  const bytes = Buffer.byteLength(v, 'utf8');
  if (bytes > PAYMENT_MEMO_BYTES) return { ok: false, message: `trackingId is ${bytes} bytes of UTF-8; a memo holds at most ${PAYMENT_MEMO_BYTES}` };
  return { ok: true, value: v };
}
