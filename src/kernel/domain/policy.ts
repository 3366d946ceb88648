/**
 * The normalized policy: one shape for every variant of payment and composable policies,
 * whether read from the chain (an account decoded with the IDL's layout) or from the read
 * model (a row folded from events). Both sources are first turned into PolicyFacts, and
 * one function shapes the answer, so the two can never drift apart.
 *
 * Conventions: amounts and every u64/i64 inside `parameters` are decimal strings (exact);
 * top-level times are unix seconds as integers; keys are camelCase; `trackingId` is the
 * memo as UTF-8 without its zero padding, `memoHex` the raw bytes.
 */
import type { EventData, Json } from '../events/codec.js';
import { frequencyName, frequencySeconds } from './frequency.js';
import { memoFromData, memoToTrackingId, COMPOSABLE_MEMO_BYTES, PAYMENT_MEMO_BYTES } from './memo.js';
import { asPolicyType, asStatus, type PolicyStatus, type PolicyType, type PolicyVariant } from './policy-type.js';
import { nextPaymentDue } from './schedule.js';

export type PolicyKind = 'payment' | 'composable';
export type PolicySource = 'chain' | 'read-model';

export interface ComposableFacts {
  totalOutput: string;
  forwardConfig: Json;
  preValidation: Json;
  postValidation: Json;
}

export interface PolicyFacts {
  address: string;
  kind: PolicyKind;
  policyId: number;
  userPayment: string;
  owner: string | null;
  tokenMint: string | null;
  gateway: string;
  recipient: string;
  policyType: PolicyType;
  status: PolicyStatus;
  memo: Uint8Array;
  /** total_paid, or total_input of a composable policy */
  totalPaid: string;
  paymentCount: number;
  lastPaymentAt: string | number | null;
  lastPaymentSignature: string | null;
  createdAt: string | number | null;
  updatedAt: string | number | null;
  composable: ComposableFacts | null;
}

export interface NormalizedComposable {
  totalInput: string;
  totalOutput: string;
  targetProgram: string | null;
  inputMint: string | null;
  outputMint: string | null;
  forwardConfig: Json;
  preValidation: Json;
  postValidation: Json;
}

export interface NormalizedPolicy {
  address: string;
  kind: PolicyKind;
  policyId: number;
  variant: PolicyVariant;
  parameters: { [key: string]: Json };
  gateway: string;
  recipient: string;
  owner: string | null;
  userPayment: string;
  tokenMint: string | null;
  trackingId: string;
  memoHex: string;
  status: PolicyStatus;
  totalPaid: string;
  paymentCount: number;
  lastPaymentAt: number | null;
  lastPaymentSignature: string | null;
  nextPaymentDue: number | null;
  createdAt: number | null;
  updatedAt: number | null;
  composable: NormalizedComposable | null;
  source: PolicySource;
  /** present (true) only when the chain was asked, did not answer, and the read model did */
  chainUnavailable?: true;
}

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * Deep snake_case → camelCase of decoded IDL values (keys only; values untouched), keys
 * in sorted order: the same object read from an event, an account or a jsonb column
 * (which reorders keys) then renders to the same text, as replay digests require.
 */
export function camelKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(camelKeys);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [camel(k), camelKeys(v[k] ?? null)]));
  }
  return v;
}

const toSeconds = (v: string | number | null): number | null => (v === null ? null : Number(v));

/** The variant's parameters, camelCase; a Subscription also gets its period in seconds. */
export function policyParameters(t: PolicyType): { [key: string]: Json } {
  const { kind: _kind, ...fields } = t;
  const out = camelKeys(fields as unknown as Json) as { [key: string]: Json }; // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion
  if (t.kind === 'Subscription') {
    out['paymentFrequency'] = frequencyName(t.payment_frequency);
    out['frequencySeconds'] = frequencySeconds(t.payment_frequency).toString();
  }
  return out;
}

function normalizeComposable(f: PolicyFacts): NormalizedComposable | null {
  if (!f.composable) return null;
  const fc = f.composable.forwardConfig as { instruction_constraint?: { program_id?: string }; input_mint?: string; output_mint?: string } | null;
  return {
    totalInput: f.totalPaid,
    totalOutput: f.composable.totalOutput,
    targetProgram: fc?.instruction_constraint?.program_id ?? null,
    inputMint: fc?.input_mint ?? null,
    outputMint: fc?.output_mint ?? null,
    forwardConfig: camelKeys(f.composable.forwardConfig),
    preValidation: camelKeys(f.composable.preValidation),
    postValidation: camelKeys(f.composable.postValidation),
  };
}

export function normalizePolicy(f: PolicyFacts, source: PolicySource): NormalizedPolicy {
  const due = nextPaymentDue(f.policyType, f.status);
  return {
    address: f.address,
    kind: f.kind,
    policyId: f.policyId,
    variant: f.policyType.kind,
    parameters: policyParameters(f.policyType),
    gateway: f.gateway,
    recipient: f.recipient,
    owner: f.owner,
    userPayment: f.userPayment,
    tokenMint: f.tokenMint,
    trackingId: memoToTrackingId(f.memo),
    memoHex: Buffer.from(f.memo).toString('hex'),
    status: f.status,
    totalPaid: f.totalPaid,
    paymentCount: f.paymentCount,
    lastPaymentAt: toSeconds(f.lastPaymentAt),
    lastPaymentSignature: f.lastPaymentSignature,
    nextPaymentDue: toSeconds(due),
    createdAt: toSeconds(f.createdAt),
    updatedAt: toSeconds(f.updatedAt),
    composable: normalizeComposable(f),
    source,
  };
}

/** What the chain account does not hold: the user payment's owner and mint, and the last payment. */
export interface AccountExtras {
  owner: string | null;
  tokenMint: string | null;
  lastPaymentAt: string | number | null;
  lastPaymentSignature: string | null;
}

const str = (d: EventData, k: string): string => {
  const v = d[k];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
};

/** The fields both account layouts share, read the same way. */
function commonAccountFacts(address: string, d: EventData, memoBytes: number) {
  return {
    address,
    policyId: Number(d['policy_id']),
    userPayment: str(d, 'user_payment'),
    gateway: str(d, 'gateway'),
    recipient: str(d, 'recipient'),
    policyType: asPolicyType(d['policy_type']),
    status: asStatus(d['status']),
    memo: memoFromData(d, memoBytes),
    paymentCount: Number(d['payment_count']),
    createdAt: str(d, 'created_at'),
    updatedAt: str(d, 'updated_at'),
  };
}

/** Facts of a decoded PaymentPolicy account (decodeAccount('PaymentPolicy', data)). */
export function factsFromPaymentAccount(address: string, d: EventData, extras: AccountExtras): PolicyFacts {
  return { ...commonAccountFacts(address, d, PAYMENT_MEMO_BYTES), kind: 'payment', totalPaid: str(d, 'total_paid'), composable: null, ...extras };
}

/** Facts of a decoded ComposablePolicy account: its input total is what it paid. */
export function factsFromComposableAccount(address: string, d: EventData, extras: AccountExtras): PolicyFacts {
  return {
    ...commonAccountFacts(address, d, COMPOSABLE_MEMO_BYTES),
    kind: 'composable',
    totalPaid: str(d, 'total_input'),
    composable: {
      totalOutput: str(d, 'total_output'),
      forwardConfig: d['forward_config'] ?? null,
      preValidation: d['pre_validation'] ?? null,
      postValidation: d['post_validation'] ?? null,
    },
    ...extras,
  };
}
