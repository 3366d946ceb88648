/**
 * The checkout session carried in a skill URL: base64 or base64url JSON, with the compact
 * keys of the public checkout links or the same names spelled out:
 *
 *   tm tokenMint · r recipient · g gateway · a amount (human-readable) ·
 *   pf paymentFrequency · ar autoRenew · mr maxRenewals · tid trackingId · memo ·
 *   su successUrl · cu cancelUrl
 *
 * tokenMint, recipient, gateway and amount are required. A session that cannot be
 * decoded or names a field twice with different values is refused (SessionError → 400).
 */
import { isPublicKey } from '../../src/kernel/domain/pda.js';

export const FREQUENCIES = ['Daily', 'Weekly', 'Monthly', 'Quarterly', 'SemiAnnually', 'Annually'] as const;
export type Frequency = (typeof FREQUENCIES)[number] | { custom: number };

export interface CheckoutSession {
  tokenMint: string;
  recipient: string;
  gateway: string;
  /** decimal string as given, e.g. "1.5" */
  amount: string;
  paymentFrequency: Frequency;
  autoRenew: boolean;
  maxRenewals: number | null;
  trackingId: string | null;
  memo: string | null;
  successUrl: string | null;
  cancelUrl: string | null;
}

export class SessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionError';
  }
}

const KEYS = {
  tokenMint: 'tm', recipient: 'r', gateway: 'g', amount: 'a', paymentFrequency: 'pf', autoRenew: 'ar',
  maxRenewals: 'mr', trackingId: 'tid', memo: 'memo', successUrl: 'su', cancelUrl: 'cu',
} as const;
type Field = keyof typeof KEYS;

/** memos are 64 bytes on chain (UTF-8, zero-padded) */
const MEMO_BYTES = 64;
const MAX_ENCODED = 4096;

export function decodeSession(encoded: string): Record<string, unknown> {
  if (encoded.length === 0 || encoded.length > MAX_ENCODED) throw new SessionError(`encoded session must be 1 to ${MAX_ENCODED} characters`);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) throw new SessionError('session is not base64 or base64url');
  const plain = encoded.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  if (plain.length % 4 === 1) throw new SessionError('session is not base64 or base64url (bad length)');
  const bytes = Buffer.from(plain, 'base64');
  // Buffer ignores what it cannot decode; re-encoding shows whether every character counted.
  if (bytes.toString('base64').replace(/=+$/, '') !== plain) throw new SessionError('session is not canonical base64');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SessionError('session is not UTF-8');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SessionError('session is not JSON');
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new SessionError('session is not a JSON object');
  return json as Record<string, unknown>;
}

function pick(raw: Record<string, unknown>, field: Field): unknown {
  const short = raw[KEYS[field]];
  const long = raw[field];
  if (short !== undefined && long !== undefined && JSON.stringify(short) !== JSON.stringify(long)) {
    throw new SessionError(`'${KEYS[field]}' and '${field}' disagree`);
  }
  return short ?? long ?? undefined;
}

function key(raw: Record<string, unknown>, field: Field): string {
  const v = pick(raw, field);
  if (v === undefined || v === null || v === '') throw new SessionError(`missing field '${KEYS[field]}' (${field})`);
  if (!isPublicKey(v)) throw new SessionError(`'${KEYS[field]}' (${field}) is not a base58 public key`);
  return v;
}

function amountOf(raw: Record<string, unknown>): string {
  const v = pick(raw, 'amount');
  if (v === undefined || v === null || v === '') throw new SessionError("missing field 'a' (amount)");
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || s.length > 80 || !/^\d+(\.\d+)?$/.test(s)) {
    throw new SessionError("'a' (amount) must be a decimal number such as \"12\" or \"1.5\"");
  }
  if (/^[0.]+$/.test(s)) throw new SessionError("'a' (amount) must be greater than zero");
  return s;
}

function frequencyOf(raw: Record<string, unknown>): Frequency {
  const v = pick(raw, 'paymentFrequency');
  if (v === undefined || v === null || v === '') return 'Monthly';
  const seconds = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
  if (seconds !== undefined) {
    if (!Number.isSafeInteger(seconds) || seconds <= 0) throw new SessionError("'pf' (paymentFrequency) in seconds must be a positive integer");
    return { custom: seconds };
  }
  if (typeof v === 'string') {
    const custom = /^custom[:(]\s*(\d+)\s*\)?$/i.exec(v);
    if (custom?.[1]) return frequencyOf({ pf: Number(custom[1]) });
    const named = FREQUENCIES.find((f) => f.toLowerCase() === v.toLowerCase().replace(/[\s_-]/g, ''));
    if (named) return named;
  }
  throw new SessionError(`'pf' (paymentFrequency) must be one of ${FREQUENCIES.join(', ')} or a number of seconds`);
}

function boolOf(raw: Record<string, unknown>, field: Field, def: boolean): boolean {
  const v = pick(raw, field);
  if (v === undefined || v === null) return def;
  if (v === true || v === 'true' || v === 1 || v === '1') return true;
  if (v === false || v === 'false' || v === 0 || v === '0') return false;
  throw new SessionError(`'${KEYS[field]}' (${field}) must be true or false`);
}

function maxRenewalsOf(raw: Record<string, unknown>): number | null {
  const v = pick(raw, 'maxRenewals');
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > 0xffffffff) {
    throw new SessionError("'mr' (maxRenewals) must be a non-negative integer or null");
  }
  return n;
}

function textOf(raw: Record<string, unknown>, field: Field): string | null {
  const v = pick(raw, field);
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw new SessionError(`'${KEYS[field]}' (${field}) must be a string`);
  if (Buffer.byteLength(v, 'utf8') > MEMO_BYTES) throw new SessionError(`'${KEYS[field]}' (${field}) is longer than ${MEMO_BYTES} bytes`);
  return v;
}

function urlOf(raw: Record<string, unknown>, field: Field): string | null {
  const v = pick(raw, field);
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string' && v.length <= 2048) {
    try {
      const u = new URL(v);
      if (u.protocol === 'https:' || u.protocol === 'http:') return u.toString();
    } catch { /* refused below */ }
  }
  throw new SessionError(`'${KEYS[field]}' (${field}) must be an http or https URL`);
}

export function parseSession(encoded: string): CheckoutSession {
  return sessionFromFields(decodeSession(encoded));
}

/** The session of decoded fields (compact or long names), checked as an encoded one is. */
export function sessionFromFields(raw: Record<string, unknown>): CheckoutSession {
  return {
    tokenMint: key(raw, 'tokenMint'),
    recipient: key(raw, 'recipient'),
    gateway: key(raw, 'gateway'),
    amount: amountOf(raw),
    paymentFrequency: frequencyOf(raw),
    autoRenew: boolOf(raw, 'autoRenew', true),
    maxRenewals: maxRenewalsOf(raw),
    trackingId: textOf(raw, 'trackingId'),
    memo: textOf(raw, 'memo'),
    successUrl: urlOf(raw, 'successUrl'),
    cancelUrl: urlOf(raw, 'cancelUrl'),
  };
}

export function frequencyLabel(f: Frequency): string {
  return typeof f === 'string' ? f : `Custom (every ${f.custom} s)`;
}
