/**
 * Payment requirements (SPEC.md, "Payment protocol objects"): what a merchant configures
 * on a protected route, normalized once when the middleware is built (requirement-forms.ts),
 * and the shapes they take on the wire (an `accepts` entry, the `Payment-Required` header).
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
import type { Frequency } from '../../src/kernel/domain/policy-type.js';

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
/** What every scheme's requirement holds but its id. */
export type RequirementBase = Omit<Common, 'id'>;
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


export class RequirementError extends Error {
  constructor(message: string) {
    super(`payment requirement: ${message}`);
    this.name = 'RequirementError';
  }
}

/** A configured amount: a positive safe integer, else `def`; throws RequirementError. */
export function positive(v: Amount | undefined, what: string, def?: bigint): bigint {
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


/** "Monthly", "monthly", "Custom:3600", "3600" → the IDL's PaymentFrequency. */
export function parseFrequency(text: string): Frequency {
  const named = Object.keys(FREQUENCY_SECONDS).find((k) => k.toLowerCase() === text.toLowerCase());
  if (named) return named as Exclude<Frequency, { kind: 'Custom' }>;
  const m = /^(?:custom[:(])?(\d{1,12})\)?$/i.exec(text.trim());
  if (m?.[1] && BigInt(m[1]) > 0n) return { kind: 'Custom', value: BigInt(m[1]).toString() };
  throw new RequirementError(`paymentFrequency must be one of ${Object.keys(FREQUENCY_SECONDS).join(', ')} or Custom:<seconds>, got ${JSON.stringify(text)}`);
}


export function frequencyText(f: Frequency): string {
  return typeof f === 'string' ? f : `Custom:${f.value}`;
}

/** What a requirement's id hashes: the terms every scheme shares, then the scheme's own. */
export type IdParts = readonly (string | number | boolean | null)[];

export function hashId(parts: IdParts): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
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
