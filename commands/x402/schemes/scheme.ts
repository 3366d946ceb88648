/**
 * What one payment scheme is to the payment engine (engine.ts): a `SchemeEngine`, registered
 * once in the table of schemes/index.ts. The engine checks what every scheme shares (the
 * payment names the requirement, its scheme and network; a bearer JWT is genuine and names
 * a requirement of this resource) and hands everything else to the requirement's scheme,
 * once per call: the middleware, the facilitator API and the MCP transport thus run the same
 * rules for a scheme, whichever door the payment came in by.
 *
 * The four Tributary schemes create a payment policy on chain and share that path
 * (schemes/policy.ts); each names only what is its own (schemes/deferred.ts, payg.ts,
 * upto.ts, prepaid.ts). A scheme whose payment is a plain token transfer, settled once by a
 * facilitator, implements `verify` and `settle` and leaves out the rest: it has no policy,
 * so no bearer admission and no JWT claims of a policy.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../../infra/log/logger.js';
import type { Clock } from '../../../src/kernel/domain/clock.js';
import type { PolicyType } from '../../../src/kernel/domain/policy-type.js';
import type { PdaDeriver } from '../../../src/kernel/domain/pda.js';
import type { SettledResult, Idempotency } from '../idempotency.js';
import type { UsageLedger } from '../metering.js';
import type { Payability } from '../payability.js';
import type { PaymentPayload } from '../payload.js';
import type { PolicyCache } from '../policy-cache.js';
import type { CreditDeps, CreditGrant } from '../prepaid/credit.js';
import type { AcceptedRequirement, IdParts, PaymentRequirement, PaymentRequirementInput, RequirementBase, Scheme } from '../requirements.js';
import type { ChainDeps, SettleDeps } from '../settle.js';
import type { X402Claims } from '../tokens.js';
import type { CheckedPayment } from '../verify-transaction.js';

/** The requirement of one scheme: `RequirementOf<'x402://payg'>` is a PaygRequirement. */
export type RequirementOf<S extends Scheme> = Extract<PaymentRequirement, { scheme: S }>;

/**
 * A payment that passed every check: a transaction to send, or (no transaction) a payer
 * who proved to be the payer and claims to hold a matching policy already. A scheme whose
 * checked payment has another shape adds its own `ok: true` member here.
 */
export type Verified =
  | { ok: true; payer: string; payment: CheckedPayment }
  | { ok: true; payer: string; existing: true }
  | { ok: false; reason: string };
export type Accepted = Extract<Verified, { ok: true }>;

/** The fields of an `accepts` entry that are a scheme's own (between the shared ones and `extra`). */
export type AcceptedTerms = Omit<Partial<AcceptedRequirement>, keyof RequirementBase | 'scheme' | 'id' | 'resource' | 'extra'>;

/** Who paid, under which policy, and what a metered request counted. */
export interface X402Grant {
  payer: string;
  policy: string;
  scheme: Scheme;
  network: string;
  requirementId: string;
  metered?: { chunk: string; periodTotal: string; periodLimit: string; periodEnd: number; requestId?: string };
  /** x402://prepaid: what this request drew from the credit and what is left */
  prepaid?: CreditGrant;
}

/**
 * What a scheme's engine is handed on every call: the collaborators the payment engine built
 * once from X402Deps (one chain connection, one policy cache, one Redis), never its own. A
 * scheme that needs one more (a database, a fee payer's keys) adds it here, optional, and
 * createPaymentEngine builds it once from X402Deps.
 */
export interface SchemeContext {
  pdas: PdaDeriver;
  clock: Clock;
  /** the clock in unix seconds, as the chain counts */
  nowSeconds(): number;
  chain: ChainDeps;
  /** once per transaction signature, across nodes (idempotency.ts) */
  idempotency: Idempotency;
  /** what settlement of a policy needs: the signer of JWTs, their audience and lifetime, the grace cap */
  settle: SettleDeps;
  /** SUBSCRIPTION_GRACE_SECONDS: the cap of a requirement's own grace */
  graceSeconds: number;
  /** policy accounts read through X402_CACHE_MS */
  policies: PolicyCache;
  /** can a pull-scheme policy still be charged (payability.ts) */
  payability: Payability;
  /** x402://prepaid credits (prepaid/credit.ts) */
  credits: CreditDeps;
  redis: Redis;
  redisPrefix: string;
  /** the durable ledger of metered chunks, when the service keeps one */
  usage?: UsageLedger;
  logger?: Logger;
}

/**
 * One payment scheme, as the payment engine calls it. Every member takes the engine's
 * context first and holds no state of its own: the object is a table row, built once.
 *
 * The engine has already checked, before any member runs, that the payment names this
 * requirement (`p.id === r.id`) under its scheme and network, and on the bearer path that
 * the JWT is genuine, unexpired, issued for this requirement and (when bound) this gateway.
 *
 * Refusals: a member RETURNS the payer's refusal as a reason (`{ ok: false, reason }`, or a
 * string): it becomes a 402 with that reason. `settle` THROWS PaymentRefused (settle.ts) for a
 * refusal the chain gave, an AppError 503 (`upstreamUnavailable`) when the chain, Redis or
 * PostgreSQL did not answer, or a 409 (`conflict`) while the same payment settles elsewhere.
 * Nothing a payer sends may end in a 500.
 */
export interface SchemeEngine<R extends PaymentRequirement> {
  readonly scheme: R['scheme'];
  /**
   * The requirement a merchant's input makes (requirement-forms.ts checked what every scheme
   * shares into `base`; the id hashes `head` and the scheme's own terms). Throws
   * RequirementError. `graceCapSeconds`: SUBSCRIPTION_GRACE_SECONDS of the serving service.
   */
  requirement(input: PaymentRequirementInput, base: RequirementBase, head: IdParts, graceCapSeconds: number | undefined): R;
  /** The scheme's own fields of the requirement's `accepts` entry; `nowSeconds` dates a window. */
  accepted(r: R, nowSeconds: number): AcceptedTerms;
  /**
   * Why a policy's type does not carry the requirement's terms, or undefined when it does.
   * Terms match exactly: a lower amount or a looser cap is another agreement than the one the
   * resource is sold under. `paid`: the policy's payment_count. Schedule state is no term.
   */
  terms(r: R, type: PolicyType, paid: number): string | undefined;
  /**
   * A policy about to be created (its terms already matched): why its schedule is not
   * acceptable (a first payment due later than now, a deadline past the longest window).
   */
  newPolicy(r: R, type: PolicyType, nowSeconds: number): string | undefined;
  /** How long past next_payment_due a policy of this requirement is honoured, at most `capSeconds`. */
  grace(r: R, capSeconds: number): number;
  /**
   * The new policy's share of the payer's approve (allowance.ts): what it may pull in a year
   * (or its maximum, or its credit), and how that is reckoned, for a refusal to name.
   */
  allowance(r: R): Allowance;
  /**
   * The payer's side (payment-transaction.ts): the policy_type argument its Payment
   * transaction creates, from the requirement and the `accepts` entry it answers.
   */
  policyType(r: R, accepted: AcceptedRequirement): unknown;
  /** the Payment transaction executes the first payment (a subscription's first period, a credit) */
  readonly executesPayment: boolean;
  /** at a net-mode gateway the program draws the amount and the fee from the payer: the approve covers both */
  readonly feeOnTop: boolean;
  /**
   * The payload's own checks, pure (no RPC, nothing sent): its transaction has the shape the
   * scheme accepts and the requirement's terms, and the sender proved to be the payer
   * (proof.ts). `resource` is the URL the payer's proof names.
   */
  verify(ctx: SchemeContext, p: PaymentPayload, r: R, resource: string): Verified;
  /**
   * Sends, confirms and answers a verified payment: the `Payment-Response` header and the
   * body `{ jwt, message }`, and the facts the facilitator answers (payer, transaction, and
   * `policy`/`expiresAt` where a policy stands behind the JWT). Once per transaction
   * signature (`ctx.idempotency`): the same payment sent again gets the same answer. What the
   * payment bought is recorded before the answer leaves.
   */
  settle(ctx: SchemeContext, r: R, v: Accepted): Promise<SettledResult>;
  /**
   * Bearer admission: does the JWT's policy still serve this requirement for one request of
   * `chunk` (the route's price; undefined: the requirement's own)? The grant, or why not.
   * A metered grant (`metered.requestId`) is a reservation that `answered` settles.
   * Absent: the scheme sells no bearer access (a JWT naming it is refused).
   */
  admit?(ctx: SchemeContext, claims: X402Claims, r: R, chunk: bigint | undefined): Promise<X402Grant | string>;
  /**
   * The request of one of this scheme's grants ended: served (charge it) or not (take its
   * reservation back). Never throws: a mark lost leaves the reservation to its bound.
   */
  answered?(ctx: SchemeContext, grant: X402Grant, served: boolean): Promise<void>;
  /**
   * The scheme's terms beyond an `accepts` entry, as exact decimal strings, for a remote
   * facilitator (backend.ts): they travel in the settle and usage requests.
   */
  wireTerms?(r: R): Record<string, string>;
  /**
   * A merchant's usage report settles this scheme's payment (the facilitator's usage call):
   * `grant` was admitted for `amount` (undefined: the requirement's maximum), and with
   * `transaction` (the merchant's signed settlement) the payment is settled on chain, once.
   */
  report?(ctx: SchemeContext, grant: X402Grant, amount: bigint | undefined, transaction: string | undefined): Promise<UsageAnswer>;
  /**
   * A usage report that names a settlement already made (`transaction`, the same signed bytes,
   * retried after its answer was lost): that settlement's answer, or undefined when it was not
   * made (the report then goes through the admission and `report` as any other). It runs
   * before the admission, which a settlement that landed no longer passes (its policy is
   * Completed, its JWT and deadline may have passed), on a JWT checked in every way but its
   * expiry: it only answers what was settled, and never settles.
   */
  settledReport?(ctx: SchemeContext, claims: X402Claims, r: R, amount: bigint | undefined, transaction: string): Promise<UsageAnswer | undefined>;
}

/** A policy's share of the payer's approve of the program's delegate. */
export interface Allowance { amount: bigint; formula: string }

/** A usage report's answer: the grant (and what was settled), or why not. */
export type UsageAnswer = ({ admitted: true; settled?: { amount: string; transaction: string } } & X402Grant) | { admitted: false; reason: string };
