/**
 * The `since` of a subscribe: where catch-up starts. A time (ISO 8601, unix seconds or
 * unix milliseconds, as a number or a digit string) or a transaction signature (base58,
 * 87 or 88 characters). Numbers below 1e11 are seconds (1e11 s is the year 5138; 1e11 ms
 * is 1973), so both units read unambiguously for any real payment.
 */
import type { Checked } from './tracking-id.js';

export type Since = { kind: 'time'; seconds: number } | { kind: 'signature'; signature: string };

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{87,88}$/;
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const MS_THRESHOLD = 1e11;

function fromNumber(n: number): Checked<Since> {
  if (!Number.isFinite(n) || n < 0) return { ok: false, message: 'since must be a non-negative time' };
  return { ok: true, value: { kind: 'time', seconds: Math.floor(n >= MS_THRESHOLD ? n / 1000 : n) } };
}

export function parseSince(v: unknown): Checked<Since> {
  if (typeof v === 'number') return fromNumber(v);
  if (typeof v !== 'string' || v.length === 0) return { ok: false, message: 'since must be an ISO time, unix seconds or milliseconds, or a transaction signature' };
  if (/^\d{1,16}$/.test(v)) return fromNumber(Number(v));
  if (SIGNATURE.test(v)) return { ok: true, value: { kind: 'signature', signature: v } };
  if (ISO.test(v)) {
    const ms = Date.parse(v);
    if (Number.isFinite(ms)) return { ok: true, value: { kind: 'time', seconds: Math.floor(Math.max(0, ms) / 1000) } };
  }
  return { ok: false, message: 'since must be an ISO time, unix seconds or milliseconds, or a transaction signature (base58, 87-88 characters)' };
}

/** The since as the ack reports it. */
export function describeSince(s: Since): string {
  return s.kind === 'signature' ? s.signature : new Date(s.seconds * 1000).toISOString();
}
