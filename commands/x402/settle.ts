/**
 * Settlement: a checked payment transaction goes to the chain (sendTransaction with
 * preflight), is confirmed (getSignatureStatuses until the configured commitment), and the
 * policy it created is read back and checked against the requirement. A payer who holds
 * an Active policy with the same terms already is not asked for another: the transaction
 * is then not sent at all (its blockhash must still be valid, so an old Payment header
 * cannot be replayed to mint tokens for someone else's policy).
 *
 * Failures: PaymentRefused (the chain said no, or the created policy is not what was
 * asked) becomes a 402 with its reason; an unreachable or slow chain is a 503.
 */
import { readProgramAccount, readProgramAccounts, type AccountRead } from '../../infra/solana/accounts.js';
import { RpcResponseError, RpcUnavailableError, type RpcClient } from '../../infra/solana/rpc-client.js';
import { confirm, send, status } from '../../infra/solana/sender.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { describeTransactionError, nameCustomErrors } from '../../src/kernel/domain/program-errors.js';
import { asPolicyType, asStatus, type PolicyStatus, type PolicyType } from '../../src/kernel/domain/policy-type.js';
import { upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { PolicyCache } from './policy-cache.js';
import { keyValueHeader, type PaymentRequirement } from './requirements.js';
import type { SettledResult } from './idempotency.js';
import { issueX402Token, type X402Signer } from './tokens.js';
import type { CheckedPayment } from './verify-transaction.js';

export class PaymentRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'PaymentRefused';
  }
}

export interface ChainDeps {
  rpc: RpcClient;
  pdas: PdaDeriver;
  commitment: Commitment;
  confirmTimeoutMs: number;
  sleep?: (ms: number) => Promise<void>;
}

const chainDown = (err: unknown): boolean => err instanceof RpcUnavailableError;

type Found = AccountRead & { kind: 'found' };

/**
 * What settling and serving a policy needs of its scheme, which alone knows it (the
 * schemes/ folder hands its own): when its policy serves, whether one the payer holds may
 * serve again, and how the answer names it.
 */
export interface PolicyRules {
  /** why a policy of this status, after `paymentCount` payments, does not serve (yet), or undefined */
  serving(status: PolicyStatus, paymentCount: number): string | undefined;
  /** a matching policy the payer holds may serve instead of a new one; false: every payment is a new one */
  reusable: boolean;
  /**
   * whether a matching policy can still serve a request (a credit with room left, a payer who still funds it);
   * `paying`: the address of the policy the Payment transaction in hand creates (it may have landed already)
   */
  usable?(policy: Found, paying?: string): Promise<boolean>;
  /** a policy the service recorded as serving the payer, whose account may be gone (a prepaid credit left on a closed policy) */
  recorded?(payer: string): Promise<string | undefined>;
  /** why the payer cannot fund what the payment in hand would authorize (an upto's hold on top of its open ones), checked before it is sent */
  fundsProblem?(p: CheckedPayment): Promise<string | undefined>;
  /** how the answer names a policy the payer holds already */
  held(policy: string): string;
  /** why a policy's type does not carry the requirement's terms (`paid`: its payment_count), or undefined */
  terms(type: PolicyType, paid: number): string | undefined;
  /** how long past next_payment_due the requirement's subscription is honoured, at most `capSeconds` */
  grace(capSeconds: number): number;
}

/** A policy serves while Active (the pull schemes, x402://payg and x402://upto). */
export const servesWhileActive = (status: PolicyStatus): string | undefined => (status === 'Active' ? undefined : `is ${status}`);

/** A read the settlement cannot do without: an unreachable chain, or one answering an error, is a 503. */
export async function chainRead<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (chainDown(err) || err instanceof RpcResponseError) throw upstreamUnavailable(`the chain did not answer ${what}: ${(err as Error).message}`);
    throw err;
  }
}

/**
 * Sends the transaction (infra/solana/sender.ts). The program's refusal at preflight, an
 * unknown blockhash or a refused fee payer is the payer's (402, in the program's words),
 * unless a send of the same bytes before landed (its status is read). Any other answer (a
 * node behind, a rate limit) says nothing of whether the bytes land: a 503, and the same
 * Payment header sent again resumes.
 */
export async function sendPayment(deps: ChainDeps, p: Pick<CheckedPayment, 'wire' | 'signature'>): Promise<void> {
  const sent = await send(deps, p.wire);
  if (sent.kind === 'sent') return;
  const refusal = sent.kind === 'refused' ? describeTransactionError(sent.refusal.err, sent.refusal.logs)
    : sent.error.kind === 'blockhash_not_found' || sent.error.kind === 'rejected' ? nameCustomErrors(sent.error.message) : undefined;
  if (refusal !== undefined) {
    // a send of these bytes before (a settlement retried) may have landed: a node simulates against the state it left
    const fate = await status(deps, p.signature, { history: true });
    if (fate.kind === 'landed' || fate.kind === 'pending' || fate.kind === 'failed') return; // confirmPayment reads it
    if (fate.kind === 'unseen') throw new PaymentRefused(`the chain refused the transaction: ${refusal}`);
  }
  const why = sent.kind === 'in_doubt' ? `${sent.error.kind}: ${sent.error.message}` : 'its status unread';
  throw upstreamUnavailable(`the chain did not take the transaction (${why}); send the same Payment header again to resume`);
}

/** Polls the signature's status until it reaches the commitment, fails, or the timeout passes (503). */
export async function confirmPayment(deps: ChainDeps, signature: string): Promise<void> {
  const fate = await confirm(deps, signature, { timeoutMs: deps.confirmTimeoutMs, history: false, ...(deps.sleep ? { sleep: deps.sleep } : {}) });
  if (fate.kind === 'landed') return;
  if (fate.kind === 'failed') throw new PaymentRefused(`the transaction failed on chain: ${describeTransactionError(fate.refusal.err)}`);
  throw upstreamUnavailable(`transaction ${signature} not ${deps.commitment} within ${deps.confirmTimeoutMs} ms; send the same Payment header again to resume`);
}

const readOpts = (deps: ChainDeps) => ({ programId: deps.pdas.programId, commitment: deps.commitment });

/**
 * The created policy, read back: it must be the payer's, at its PDA, Active, with the requirement's terms.
 * Read missing, it is in doubt, not refused: the transaction that creates it has landed (and paid its
 * first period, for a scheme that pays at once), so an answer of no account is a node behind the one that
 * confirmed it. A 402 there took the money and refused the access (and a payer told its payment failed
 * pays again); the 503 says to send the same Payment header again, which finds the policy and answers it.
 */
export async function readCreatedPolicy(deps: ChainDeps, p: CheckedPayment, r: PaymentRequirement, rules: PolicyRules): Promise<Found> {
  const read = await chainRead('getAccountInfo', () => readProgramAccount(deps.rpc, p.policyAddress, 'PaymentPolicy', readOpts(deps)));
  if (read.kind !== 'found') {
    throw upstreamUnavailable(`transaction ${p.signature} landed, but the chain does not show its payment policy ${p.policyAddress} yet; send the same Payment header again to resume`);
  }
  const d = read.data;
  const policyId = Number(d['policy_id']);
  if (d['user_payment'] !== p.userPayment || deps.pdas.paymentPolicy(p.userPayment, policyId) !== p.policyAddress) {
    throw new PaymentRefused(`${p.policyAddress} is not a policy of the payer's user payment`);
  }
  const mismatch = policyMismatch(read, r, rules);
  if (mismatch) throw new PaymentRefused(`the created policy ${mismatch}`);
  return read;
}

/**
 * Why a policy account does not serve the requirement (its scheme's status rule, other
 * parties, another memo or other terms), or undefined.
 */
export function policyMismatch(read: Found, r: PaymentRequirement, rules: Pick<PolicyRules, 'serving' | 'terms'>): string | undefined {
  const d = read.data;
  const serving = rules.serving(asStatus(d['status']), Number(d['payment_count'] ?? 0));
  if (serving) return serving;
  if (d['recipient'] !== r.recipient) return 'pays another recipient';
  if (d['gateway'] !== r.gateway) return 'is under another gateway';
  if (r.memo !== undefined && d['memo_hex'] !== textToFixedBytes(r.memo, PAYMENT_MEMO_BYTES)?.toString('hex')) return 'carries another memo';
  const terms = rules.terms(asPolicyType(d['policy_type']), Number(d['payment_count'] ?? 0));
  return terms === undefined ? undefined : `does not match: ${terms}`;
}

/**
 * Access follows payment: why a subscription is no longer honoured (its payment was due
 * longer than the grace period ago), or undefined while it is paid through.
 */
export function overdueReason(t: PolicyType, nowSeconds: number, graceSeconds: number): string | undefined {
  if (t.kind !== 'Subscription') return undefined;
  const due = Number(t.next_payment_due);
  if (due + graceSeconds > nowSeconds) return undefined;
  return `is overdue: its payment was due at ${due} (unix seconds) and the grace period of ${graceSeconds} s has passed; pay again`;
}

/** How many of a payer's newest policies are searched for one that serves the requirement. */
export const EXISTING_POLICY_SCAN = 100;

/**
 * The payer's newest Active policy with the requirement's terms (a prepaid credit: paid; a
 * subscription: paid through its grace), read from the chain; `usable` may still pass one
 * over (a credit used up, or a policy the service did not sell). `graceSeconds` caps the
 * requirement's own grace; `paying`: the policy the Payment transaction in hand creates.
 */
export async function findMatchingPolicy(
  deps: ChainDeps, payer: string, r: PaymentRequirement, rules: PolicyRules, nowSeconds: number, graceSeconds = Number.MAX_SAFE_INTEGER, paying?: string,
): Promise<Found | undefined> {
  if (!rules.reusable) return undefined;
  const userPayment = deps.pdas.userPayment(payer, r.tokenMint);
  const up = await chainRead('getAccountInfo', () => readProgramAccount(deps.rpc, userPayment, 'UserPayment', readOpts(deps)));
  if (up.kind !== 'found') return undefined;
  const count = Number(up.data['created_policies_count'] ?? 0);
  const ids: number[] = [];
  for (let id = count; id >= 1 && ids.length < EXISTING_POLICY_SCAN; id -= 1) ids.push(id);
  if (ids.length === 0) return undefined;
  const reads = await chainRead('getMultipleAccounts', () =>
    readProgramAccounts(deps.rpc, ids.map((id) => deps.pdas.paymentPolicy(userPayment, id)), 'PaymentPolicy', readOpts(deps)));
  const matching = reads.filter((a): a is AccountRead & { kind: 'found' } => {
    if (a.kind !== 'found' || policyMismatch(a, r, rules) !== undefined) return false;
    const t = asPolicyType(a.data['policy_type']);
    if (overdueReason(t, nowSeconds, rules.grace(graceSeconds)) !== undefined) return false; // an overdue one serves nobody
    return !(t.kind === 'PayAsYouGo' && t.expiry_date !== null && Number(t.expiry_date) <= nowSeconds);
  });
  if (!rules.usable) return matching[0];
  for (const a of matching) if (await rules.usable(a, paying)) return a;
  return undefined;
}

export async function blockhashValid(deps: ChainDeps, blockhash: string): Promise<boolean> {
  const r = await chainRead('isBlockhashValid', () =>
    deps.rpc.call<{ value: boolean }>('isBlockhashValid', [blockhash, { commitment: deps.commitment === 'finalized' ? 'finalized' : 'confirmed' }]));
  return r.value;
}

/*
 * Settling one checked payment, as the owner of its idempotency lease: an existing Active
 * policy with the requirement's terms serves as is (no transaction sent); otherwise the
 * transaction is sent, confirmed, and the created policy read back. Then the JWT.
 */
export interface SettleDeps {
  chain: ChainDeps;
  signer: X402Signer;
  /** JWT_AUDIENCE: the JWT's aud is this narrowed to the requirement's gateway and id */
  audience: string;
  clock: Clock;
  policies: PolicyCache;
  jwtTtlSeconds: number;
  /** SUBSCRIPTION_GRACE_SECONDS: an overdue subscription does not serve as an existing policy */
  graceSeconds: number;
}

export async function settlePayment(deps: SettleDeps, r: PaymentRequirement, rules: PolicyRules, p: CheckedPayment): Promise<SettledResult> {
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  const existing = await findMatchingPolicy(deps.chain, p.payer, r, rules, nowSeconds, deps.graceSeconds, p.policyAddress);
  // the transaction is not sent then, so nothing on chain vouches for its freshness but this
  if (existing && !(await blockhashValid(deps.chain, p.recentBlockhash))) {
    throw new PaymentRefused('the transaction\'s blockhash has expired; sign the payment again with a recent blockhash');
  }
  if (existing) return answer(deps, r, rules, p.payer, existing, undefined);
  const unfunded = await rules.fundsProblem?.(p);
  if (unfunded !== undefined) throw new PaymentRefused(unfunded);
  return answer(deps, r, rules, p.payer, await sendAndRead(deps, r, rules, p), p.signature);
}

/**
 * A payment without a transaction: the payer (whose proof the middleware checked) holds
 * an Active policy with the requirement's terms already, or one the scheme recorded as still
 * serving it (`recorded`: a prepaid credit with room left on a closed policy), or is refused.
 */
export async function settleExisting(deps: SettleDeps, r: PaymentRequirement, rules: PolicyRules, payer: string): Promise<SettledResult> {
  const existing = await findMatchingPolicy(deps.chain, payer, r, rules, Math.floor(deps.clock.now() / 1000), deps.graceSeconds)
    ?? await rules.recorded?.(payer);
  if (!existing) throw new PaymentRefused(`${payer} holds no active payment policy with the terms of requirement ${r.id}; send a transaction that creates one`);
  return answer(deps, r, rules, payer, existing, undefined);
}

async function answer(
  deps: SettleDeps, r: PaymentRequirement, rules: PolicyRules, payer: string, held: Found | string, transaction: string | undefined,
): Promise<SettledResult> {
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  // a recorded policy (an address) has no account to read: what it serves is the service's record
  const policy = typeof held === 'string' ? { address: held } : held;
  if (typeof held !== 'string') deps.policies.prime(held);
  const expiresAt = typeof held === 'string' ? nowSeconds + deps.jwtTtlSeconds : jwtExpiry(held, nowSeconds + deps.jwtTtlSeconds);
  const jwt = await issueX402Token(deps.signer, deps.audience, {
    payer, gateway: r.gateway, policy: policy.address, requirementId: r.id, scheme: r.scheme, network: r.network, tokenMint: r.tokenMint,
  }, expiresAt);
  const pairs: [string, string | number][] = [
    ['scheme', r.scheme], ['network', r.network], ['id', r.id], ['timestamp', deps.clock.now()], ['policy', policy.address],
  ];
  if (transaction !== undefined) pairs.push(['transaction', transaction]);
  const named = rules.held(policy.address);
  const message = transaction === undefined
    ? `the payer already holds ${named} with these terms; no new policy was created. Present the JWT as a bearer token.`
    : `payment policy ${policy.address} created (transaction ${transaction}). Present the JWT as a bearer token.`;
  return {
    paymentResponse: keyValueHeader(pairs), body: { jwt, message }, payer, policy: policy.address, expiresAt,
    ...(transaction !== undefined ? { transaction } : {}),
  };
}

/** An upto authorization's JWT expires at its deadline, when that comes before the usual lifetime. */
function jwtExpiry(policy: Found, usual: number): number {
  const t = asPolicyType(policy.data['policy_type']);
  return t.kind === 'UpTo' ? Math.min(usual, Number(t.deadline)) : usual;
}

async function sendAndRead(deps: SettleDeps, r: PaymentRequirement, rules: PolicyRules, p: CheckedPayment) {
  await sendPayment(deps.chain, p);
  await confirmPayment(deps.chain, p.signature);
  return readCreatedPolicy(deps.chain, p, r, rules);
}
