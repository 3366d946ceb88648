/**
 * Payment requirements (SPEC.md, "Payment protocol objects"): what a merchant configures
 * on a protected route, normalized once when the middleware is built, and the shapes they
 * take on the wire (an `accepts` entry, the `Payment-Required` header).
 *
 * Amounts are integers in the token's smallest units. SPEC types them as JSON numbers, so
 * a configured amount must be a safe integer (≤ 2^53 − 1) to survive the trip exactly.
 *
 * The id is a stable hash of the terms a payer agrees to (scheme, network, program,
 * amount, recipient, gateway, mint, memo and the scheme's own terms), not of the resource
 * URL or the currency label: two routes with the same terms share one agreement, and one
 * JWT serves both. Every node computes the same id for the same configuration.
 */
import { createHash } from 'node:crypto';
import { FREQUENCY_SECONDS } from '../../src/kernel/domain/frequency.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import type { Frequency } from '../../src/kernel/domain/policy-type.js';
import { PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import { subscriptionGraceSeconds } from '../../src/kernel/domain/grace.js';

/** How far before the server's now an offered x402://upto window starts (see acceptedRequirement). */
export const UPTO_START_SKEW_SECONDS = 60;
export const X402_VERSION = 2;
/** How long after a pay-as-you-go period ends the service may still need to charge its usage (the default minExpirySeconds beyond the period). */
export const PAYG_SETTLE_ALLOWANCE_SECONDS = 3600;
export const SCHEMES = ['deferred', 'x402://payg', 'x402://upto', 'x402://prepaid'] as const;
export type Scheme = (typeof SCHEMES)[number];

type Amount = number | string | bigint;

/** What a merchant writes: SPEC's requirement fields; optional ones have defaults. */
export interface PaymentRequirementInput {
  scheme: Scheme;
  /** CAIP-2 chain id, e.g. solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp */
  network: string;
  /** smallest token units: the subscription amount (deferred), the price of one request (payg), the maximum (upto) or the credit paid up front (prepaid) */
  amount: Amount;
  recipient: string;
  gateway: string;
  tokenMint: string;
  /** label shown to payers; default the symbol of a well-known mint, else the mint */
  currency?: string;
  /** fixed resource URL; default the request's own URL */
  resource?: string;
  description?: string;
  /** a tracking id the policy's memo must carry (UTF-8, at most 64 bytes) */
  memo?: string;
  /** deferred: Daily, Weekly, Monthly (default), Quarterly, SemiAnnually, Annually or Custom:<seconds> */
  paymentFrequency?: string;
  /** deferred: default true */
  autoRenew?: boolean;
  /** deferred: default null (unlimited) */
  maxRenewals?: number | null;
  /**
   * deferred: seconds past next_payment_due the subscription is still honoured; default a
   * tenth of the period; at most SUBSCRIPTION_GRACE_SECONDS (3 days by default). Not a term
   * on chain: it is left out of the id.
   */
  gracePeriodSeconds?: number;
  /** payg: cap per period; default 100 × amount */
  maxAmountPerPeriod?: Amount;
  /** payg: default 86400 */
  periodLengthSeconds?: Amount;
  /** payg: cap per request; default amount */
  maxChunkAmount?: Amount;
  /**
   * payg: the most a payer may use beyond what has been charged on chain (the merchant's
   * exposure to one payer); default maxChunkAmount. Not a term of the policy: not in the id.
   */
  maxUnsettledAmount?: Amount;
  /**
   * payg: the shortest life a payer's policy may have, in seconds from its creation (its
   * expiry_date at least this far ahead); default periodLengthSeconds + 3600, a period and
   * the time the service takes to charge its last usage. Not in the id.
   */
  minExpirySeconds?: Amount;
  /**
   * upto: the longest authorization the resource grants, in seconds: a payer's UpTo policy
   * must reach its deadline within this of its creation; default 3600. The JWT expires
   * at the policy's deadline.
   */
  maxTimeoutSeconds?: Amount;
  /**
   * prepaid: what one request costs, drawn from the credit (`amount`, paid up front);
   * default amount / 100 (at least 1), a credit of 100 requests
   */
  pricePerRequest?: Amount;
}

interface Common {
  id: string;
  network: string;
  programId: string;
  amount: bigint;
  recipient: string;
  gateway: string;
  tokenMint: string;
  currency: string;
  resource?: string;
  description?: string;
  memo?: string;
}
export interface DeferredRequirement extends Common {
  scheme: 'deferred';
  paymentFrequency: Frequency;
  autoRenew: boolean;
  maxRenewals: number | null;
  /** access follows payment: honoured until next_payment_due + this (capped already) */
  gracePeriodSeconds: number;
}
export interface PaygRequirement extends Common {
  scheme: 'x402://payg';
  maxAmountPerPeriod: bigint;
  periodLengthSeconds: bigint;
  maxChunkAmount: bigint;
  maxUnsettledAmount: bigint;
  minExpirySeconds: bigint;
}
/** x402://upto: `amount` is the maximum the merchant may settle, once, before the deadline. */
export interface UptoRequirement extends Common {
  scheme: 'x402://upto';
  maxTimeoutSeconds: bigint;
}
/**
 * x402://prepaid: `amount` is the credit the payer pays up front (the program's OneTime
 * policy, executed in the Payment transaction); each request draws its cost from it.
 */
export interface PrepaidRequirement extends Common {
  scheme: 'x402://prepaid';
  pricePerRequest: bigint;
}
export type PaymentRequirement = DeferredRequirement | PaygRequirement | UptoRequirement | PrepaidRequirement;

/** An element of the 402 body's `accepts` (SPEC's fields, amounts as numbers, plus `extra.programId`). */
export interface AcceptedRequirement {
  scheme: Scheme;
  network: string;
  amount: number;
  recipient: string;
  gateway: string;
  tokenMint: string;
  currency: string;
  resource: string;
  id: string;
  description?: string;
  memo?: string;
  paymentFrequency?: string;
  autoRenew?: boolean;
  maxRenewals?: number | null;
  /** deferred: access past next_payment_due, in seconds */
  gracePeriodSeconds?: number;
  maxAmountPerPeriod?: number;
  periodLengthSeconds?: number;
  maxChunkAmount?: number;
  /** payg: what a payer may use beyond what is charged on chain before requests are refused */
  maxUnsettledAmount?: number;
  /** payg: a policy's expiry_date must lie at least this many seconds after its creation */
  minExpirySeconds?: number;
  /** upto: the maximum (= amount) */
  maxAmount?: number;
  /** upto: the longest authorization window in seconds */
  maxTimeoutSeconds?: number;
  /** upto: a window the payer may take, computed when the 402 was answered (unix seconds) */
  validAfter?: number;
  deadline?: number;
  /** prepaid: what one request costs, drawn from the credit (= amount) */
  pricePerRequest?: number;
  /** what a client needs beyond SPEC's fields to build the transaction */
  extra: { programId: string; x402Version: number };
}

const SYMBOLS: Readonly<Record<string, string>> = {
  EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v: 'USDC',
  '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU': 'USDC',
  Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB: 'USDT',
  So11111111111111111111111111111111111111112: 'SOL',
  mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So: 'mSOL',
};

export class RequirementError extends Error {
  constructor(message: string) {
    super(`payment requirement: ${message}`);
    this.name = 'RequirementError';
  }
}

function positive(v: Amount | undefined, what: string, def?: bigint): bigint {
  if (v === undefined) {
    if (def === undefined) throw new RequirementError(`${what} is required`);
    return def;
  }
  const text = typeof v === 'bigint' ? v.toString() : String(v);
  if (!/^\d{1,16}$/.test(text)) throw new RequirementError(`${what} must be a positive integer of at most 2^53 - 1, got ${JSON.stringify(text)}`);
  const n = BigInt(text);
  if (n <= 0n || n > BigInt(Number.MAX_SAFE_INTEGER)) throw new RequirementError(`${what} must be between 1 and 2^53 - 1, got ${text}`);
  return n;
}

function key(v: string, what: string): string {
  if (!isPublicKey(v)) throw new RequirementError(`${what} is not a base58 public key: ${JSON.stringify(v)}`);
  return v;
}

/** "Monthly", "monthly", "Custom:3600", "3600" → the IDL's PaymentFrequency. */
export function parseFrequency(text: string): Frequency {
  const named = Object.keys(FREQUENCY_SECONDS).find((k) => k.toLowerCase() === text.toLowerCase());
  if (named) return named as Exclude<Frequency, { kind: 'Custom' }>;
  const m = /^(?:custom[:(])?(\d{1,12})\)?$/i.exec(text.trim());
  if (m?.[1] && BigInt(m[1]) > 0n) return { kind: 'Custom', value: BigInt(m[1]).toString() };
  throw new RequirementError(`paymentFrequency must be one of ${Object.keys(FREQUENCY_SECONDS).join(', ')} or Custom:<seconds>, got ${JSON.stringify(text)}`);
}

/** How long past next_payment_due a requirement's subscription is honoured, at most `capSeconds`. */
export function requirementGrace(r: PaymentRequirement, capSeconds: number): number {
  return r.scheme === 'deferred' ? Math.min(r.gracePeriodSeconds, capSeconds) : capSeconds;
}

export function frequencyText(f: Frequency): string {
  return typeof f === 'string' ? f : `Custom:${f.value}`;
}

function hashId(parts: readonly (string | number | boolean | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

/** `graceCapSeconds`: SUBSCRIPTION_GRACE_SECONDS of the service that serves the requirement. */
export function normalizeRequirement(input: PaymentRequirementInput, programId: string, graceCapSeconds?: number): PaymentRequirement {
  if (!(SCHEMES as readonly string[]).includes(input.scheme)) throw new RequirementError(`scheme must be one of ${SCHEMES.join(', ')}`);
  if (!/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(input.network)) throw new RequirementError(`network must be a CAIP-2 id, got ${JSON.stringify(input.network)}`);
  if (input.memo !== undefined && textToFixedBytes(input.memo, PAYMENT_MEMO_BYTES) === undefined) {
    throw new RequirementError(`memo must fit in ${PAYMENT_MEMO_BYTES} bytes`);
  }
  const tokenMint = key(input.tokenMint, 'tokenMint');
  const base = {
    network: input.network,
    programId: key(programId, 'programId'),
    amount: positive(input.amount, 'amount'),
    recipient: key(input.recipient, 'recipient'),
    gateway: key(input.gateway, 'gateway'),
    tokenMint,
    currency: input.currency ?? SYMBOLS[tokenMint] ?? tokenMint,
    ...(input.resource !== undefined ? { resource: input.resource } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.memo !== undefined ? { memo: input.memo } : {}),
  };
  const head = [input.scheme, base.network, base.programId, base.amount.toString(), base.recipient, base.gateway, tokenMint, base.memo ?? ''];
  if (input.scheme === 'deferred') {
    const paymentFrequency = parseFrequency(input.paymentFrequency ?? 'Monthly');
    const autoRenew = input.autoRenew ?? true;
    const maxRenewals = input.maxRenewals ?? null;
    if (maxRenewals !== null && (!Number.isInteger(maxRenewals) || maxRenewals < 1 || maxRenewals > 0xffffffff)) {
      throw new RequirementError('maxRenewals must be null or a positive u32');
    }
    const declared = input.gracePeriodSeconds;
    if (declared !== undefined && (!Number.isSafeInteger(declared) || declared < 0)) throw new RequirementError('gracePeriodSeconds must be a non-negative integer');
    const gracePeriodSeconds = subscriptionGraceSeconds(paymentFrequency, graceCapSeconds, declared);
    const id = hashId([...head, frequencyText(paymentFrequency), autoRenew, maxRenewals]);
    return { ...base, id, scheme: 'deferred', paymentFrequency, autoRenew, maxRenewals, gracePeriodSeconds };
  }
  if (input.scheme === 'x402://upto') {
    const maxTimeoutSeconds = positive(input.maxTimeoutSeconds, 'maxTimeoutSeconds', 3600n);
    const id = hashId([...head, maxTimeoutSeconds.toString()]);
    return { ...base, id, scheme: 'x402://upto', maxTimeoutSeconds };
  }
  if (input.scheme === 'x402://prepaid') {
    const fallback = base.amount / 100n > 0n ? base.amount / 100n : 1n;
    const pricePerRequest = positive(input.pricePerRequest, 'pricePerRequest', fallback);
    if (pricePerRequest > base.amount) throw new RequirementError('pricePerRequest exceeds amount (the credit paid up front)');
    const id = hashId([...head, pricePerRequest.toString()]);
    return { ...base, id, scheme: 'x402://prepaid', pricePerRequest };
  }
  const maxChunkAmount = positive(input.maxChunkAmount, 'maxChunkAmount', base.amount);
  const maxAmountPerPeriod = positive(input.maxAmountPerPeriod, 'maxAmountPerPeriod', base.amount * 100n);
  const periodLengthSeconds = positive(input.periodLengthSeconds, 'periodLengthSeconds', 86_400n);
  if (base.amount > maxChunkAmount) throw new RequirementError('amount (the price of one request) exceeds maxChunkAmount');
  if (maxChunkAmount > maxAmountPerPeriod) throw new RequirementError('maxChunkAmount exceeds maxAmountPerPeriod');
  const maxUnsettledAmount = positive(input.maxUnsettledAmount, 'maxUnsettledAmount', maxChunkAmount);
  if (maxUnsettledAmount < base.amount) throw new RequirementError('maxUnsettledAmount is below amount (the price of one request)');
  const minExpirySeconds = positive(input.minExpirySeconds, 'minExpirySeconds', periodLengthSeconds + BigInt(PAYG_SETTLE_ALLOWANCE_SECONDS));
  const id = hashId([...head, maxAmountPerPeriod.toString(), periodLengthSeconds.toString(), maxChunkAmount.toString()]);
  return { ...base, id, scheme: 'x402://payg', maxAmountPerPeriod, periodLengthSeconds, maxChunkAmount, maxUnsettledAmount, minExpirySeconds };
}

/** The `accepts` entry of a requirement for a resource; `nowSeconds` dates an upto window. */
export function acceptedRequirement(r: PaymentRequirement, resource: string, nowSeconds = Math.floor(Date.now() / 1000)): AcceptedRequirement {
  const common = {
    scheme: r.scheme, network: r.network, amount: Number(r.amount), recipient: r.recipient, gateway: r.gateway,
    tokenMint: r.tokenMint, currency: r.currency, resource: r.resource ?? resource, id: r.id,
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.memo !== undefined ? { memo: r.memo } : {}),
  };
  const extra = { programId: r.programId, x402Version: X402_VERSION };
  if (r.scheme === 'deferred') {
    return {
      ...common, paymentFrequency: frequencyText(r.paymentFrequency), autoRenew: r.autoRenew, maxRenewals: r.maxRenewals,
      gracePeriodSeconds: r.gracePeriodSeconds, extra,
    };
  }
  if (r.scheme === 'x402://upto') {
    const window = Number(r.maxTimeoutSeconds);
    // the chain's clock is the time its current slot started, behind ours by up to a slot (and any skew):
    // a window that starts "now" by our clock could make an immediate settlement PaymentNotDue
    const validAfter = nowSeconds - UPTO_START_SKEW_SECONDS;
    return { ...common, maxAmount: Number(r.amount), maxTimeoutSeconds: window, validAfter, deadline: nowSeconds + window, extra };
  }
  if (r.scheme === 'x402://prepaid') return { ...common, pricePerRequest: Number(r.pricePerRequest), extra };
  return {
    ...common, maxAmountPerPeriod: Number(r.maxAmountPerPeriod), periodLengthSeconds: Number(r.periodLengthSeconds),
    maxChunkAmount: Number(r.maxChunkAmount), maxUnsettledAmount: Number(r.maxUnsettledAmount), minExpirySeconds: Number(r.minExpirySeconds), extra,
  };
}

/** The fields of the `Payment-Required` header, in SPEC's order. */
export const REQUIRED_HEADER_KEYS = ['scheme', 'network', 'resource', 'id', 'amount', 'currency', 'recipient', 'gateway', 'tokenMint'] as const;

/** `key=value,key=value` (values never contain commas: keys, ids, CAIP-2 ids, integers; a URL's commas are escaped). */
export function keyValueHeader(pairs: readonly (readonly [string, string | number])[]): string {
  return pairs.map(([k, v]) => `${k}=${String(v).replace(/,/g, '%2C')}`).join(',');
}

export function parseKeyValueHeader(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim().replace(/%2C/gi, ',');
  }
  return out;
}

/**
 * One header value for the first (preferred) requirement: a value per requirement would
 * join into one comma-separated line that no reader could split unambiguously, and the
 * body's `accepts` lists them all.
 */
export function paymentRequiredHeader(a: AcceptedRequirement): string {
  return keyValueHeader(REQUIRED_HEADER_KEYS.map((k) => [k, a[k]] as const));
}
