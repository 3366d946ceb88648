/**
 * The payment engine: every check and every effect of the payment-gated protocol, built
 * once from X402Deps and used by every entry point, the Express middleware (middleware.ts,
 * through backend.ts), the HTTP facilitator (facilitator/) and the MCP transport. One
 * implementation: a rule added here holds for a Node merchant and for a merchant in any
 * other language alike.
 *
 * The engine checks what every scheme shares and hands the rest, once, to the engine of the
 * requirement's scheme (schemes/index.ts: one object per scheme, in one table):
 *
 *   pay(payload, requirement)      verify, then settle: one call for a Payment header
 *                                  (the payment-identifier extension keeps its answer)
 *   verify(payload, requirement)   the payload names the requirement, its scheme and network;
 *                                  then the scheme's checks (a policy scheme's: the
 *                                  transaction, verify-transaction.ts, and the payer's proof);
 *                                  nothing is sent
 *   settle(requirement, payment)   the scheme sends, confirms, reads back, signs the JWT, once
 *                                  per transaction signature (idempotency.ts, settle.ts)
 *   authorize(token, pick, chunk)  the bearer path: the JWT, the requirement it names at this
 *                                  gateway; then the scheme's admission (the policy still
 *                                  serving, a pay-as-you-go chunk metered, a prepaid request
 *                                  drawn from its credit)
 *   report(token, pick, amount, tx) a merchant's usage report: authorize, then the scheme
 *                                  settles what was used (an upto authorization's pull); the
 *                                  same settlement sent again is answered before authorize
 */
import type { Redis } from 'ioredis';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { systemClock, type Clock } from '../../src/kernel/domain/clock.js';
import { createIdempotency, type SettledResult } from './idempotency.js';
import type { UsageLedger } from './metering.js';
import type { PaymentPayload } from './payload.js';
import { createPolicyCache, type PolicyCache } from './policy-cache.js';
import type { PaymentRequirement } from './requirements.js';
import { createTokenCheck, type X402Claims, type X402Signer } from './tokens.js';
import type { Logger } from '../../infra/log/logger.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import type { CreditDeps } from './prepaid/credit.js';
import { cachedCredits, type CreditLedger } from './prepaid/ledger.js';
import { createPayability } from './payability.js';
import { createPaymentIdentifiers, fingerprintOf, paymentIdentifierOf } from './payment-identifier.js';
import { PaymentRefused, type ChainDeps } from './settle.js';
import { schemeNamed, schemeOf } from './schemes/index.js';
import { redisSignInNonces, type SignInNonces } from './plugins/siwx-nonces.js';
import { redisSpentProofs, SPENT_PROOF_SECONDS, type SpentProofs } from './spent-proofs.js';
import { upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { Accepted, SchemeContext, SchemeEngine, UsageAnswer, Verified, X402Grant } from './schemes/scheme.js';

export type { Accepted, UsageAnswer, Verified, X402Grant } from './schemes/scheme.js';

export interface X402Deps {
  rpc: RpcClient;
  programId: string;
  /** commitment of confirmation and reads; default confirmed */
  commitment?: Commitment;
  redis: Redis;
  /** prefix of the Redis keys (idempotency, metering) */
  redisPrefix: string;
  signer: X402Signer;
  /** JWT_AUDIENCE of the signer's service; a JWT's aud is this narrowed to its gateway and requirement; default "tributary-api" */
  audience?: string;
  clock?: Clock;
  logger?: Logger;
  /** lifetime of an issued JWT; default 3600 */
  jwtTtlSeconds?: number;
  /** staleness bound of the bearer path (policy status, verified JWTs); default 5000 */
  cacheMs?: number;
  /** default 30000 */
  confirmTimeoutMs?: number;
  /** how long a settled payment's answer is kept for repeats; default 86400 */
  idempotencyTtlSeconds?: number;
  /** access follows payment: the cap of a subscription's grace past next_payment_due (a requirement's own is a tenth of its period); default 259200 (3 days) */
  subscriptionGraceSeconds?: number;
  /** origin of resource URLs in 402 answers (e.g. https://api.example.com); default the request's own */
  resourceBase?: string;
  /** durable record of every metered chunk (the service's Postgres ledger, which the settler charges); default none */
  usage?: UsageLedger;
  /** durable record of x402://prepaid credits and what was drawn from them (Postgres); default none, Redis alone */
  credits?: CreditLedger;
  /**
   * where Sign-In-With-X nonces are spent (plugins/siwx-nonces.ts): the service's Postgres; default Redis
   * alone, which forgets them when it loses its data (a copied message could then be answered again)
   */
  signInNonces?: SignInNonces;
  /**
   * where payment proofs are spent once a JWT is issued from them (spent-proofs.ts): the service's
   * Postgres; default Redis alone, which forgets them when it loses its data
   */
  spentProofs?: SpentProofs;
}

/** A payment's outcome: the settled answer, or the payer's refusal (a 402's reason). */
export type Paid = { ok: true; result: SettledResult; payer: string } | { ok: false; reason: string; payer?: string };

export interface PaymentEngine {
  programId: string;
  pdas: PdaDeriver;
  clock: Clock;
  redis: Redis;
  redisPrefix: string;
  policies: PolicyCache;
  chain: ChainDeps;
  /** where Sign-In-With-X nonces are spent (X402Deps.signInNonces) */
  signInNonces: SignInNonces;
  /**
   * verify, then settle: one payment, answered once per payment-identifier id under `scope`
   * (the gateway paid; payment-identifier.ts). A refusal is returned; an unreachable chain is
   * an AppError 503, a payment settling elsewhere (or an id reused) a 409.
   */
  pay(p: PaymentPayload, r: PaymentRequirement, resource: string, scope: string): Promise<Paid>;
  /** `resource` is the URL the payer's proof names (proof.ts) */
  verify(p: PaymentPayload, r: PaymentRequirement, resource: string): Verified;
  /** throws PaymentRefused (the chain said no), an AppError 503 (the chain is unreachable) or 409 (in progress elsewhere) */
  settle(r: PaymentRequirement, v: Accepted): Promise<SettledResult>;
  /**
   * the grant of a bearer JWT, or why it does not serve: `pick` chooses the requirement its claims name.
   * A metered grant with a ledger is a reservation: the caller tells answered() how its request ended.
   */
  authorize(token: string, pick: (claims: X402Claims) => PaymentRequirement | undefined, chunk?: bigint): Promise<X402Grant | string>;
  /**
   * the request of a metered grant ended: served, its chunk is charged; not served (it ended
   * unanswered), its reservation is dropped and its counts taken back. Never throws: a mark
   * lost leaves the reservation to be dropped at its bound (the payer is not charged).
   */
  answered(grant: X402Grant, served: boolean): Promise<void>;
  /**
   * A usage report that settles: the bearer admitted for `amount` (else the requirement's
   * maximum, so the payer's funding is checked for what will be pulled), then its scheme's
   * `report` (with `transaction`, the settlement on chain). A `transaction` settled already
   * is answered first, as it was settled (the scheme's settledReport). Throws as settle does.
   */
  report(token: string, pick: (claims: X402Claims) => PaymentRequirement | undefined, amount: bigint | undefined, transaction: string | undefined): Promise<UsageAnswer>;
}

export function createPaymentEngine(deps: X402Deps): PaymentEngine {
  const clock = deps.clock ?? systemClock;
  const cacheMs = deps.cacheMs ?? 5000;
  const commitment = deps.commitment ?? 'confirmed';
  const pdas = createPdaDeriver(deps.programId);
  const chain: ChainDeps = { rpc: deps.rpc, pdas, commitment, confirmTimeoutMs: deps.confirmTimeoutMs ?? 30_000 };
  const policies = createPolicyCache({ rpc: deps.rpc, programId: deps.programId, commitment, ttlMs: cacheMs, clock });
  const audience = deps.audience ?? 'tributary-api';
  const tokens = createTokenCheck(deps.signer, { cacheMs, clock, audience });
  const graceSeconds = deps.subscriptionGraceSeconds ?? 259_200;
  const credits: CreditDeps = { redis: deps.redis, redisPrefix: deps.redisPrefix, policies, ...(deps.credits ? { ledger: cachedCredits(deps.credits) } : {}) };
  const confirmTimeoutMs = chain.confirmTimeoutMs;
  const identifiers = createPaymentIdentifiers({
    redis: deps.redis, keyPrefix: deps.redisPrefix, ttlSeconds: deps.idempotencyTtlSeconds ?? 86_400, waitMs: confirmTimeoutMs + 10_000,
  });
  const ctx: SchemeContext = {
    pdas, clock, nowSeconds: () => Math.floor(clock.now() / 1000), chain, policies, credits, graceSeconds,
    idempotency: createIdempotency({
      redis: deps.redis, keyPrefix: deps.redisPrefix, leaseMs: confirmTimeoutMs + 10_000, ttlSeconds: deps.idempotencyTtlSeconds ?? 86_400,
    }),
    settle: { chain, signer: deps.signer, audience, clock, policies, jwtTtlSeconds: deps.jwtTtlSeconds ?? 3600, graceSeconds },
    payability: createPayability({ rpc: deps.rpc, programId: deps.programId, commitment, ttlMs: cacheMs, clock }),
    redis: deps.redis, redisPrefix: deps.redisPrefix,
    ...(deps.usage ? { usage: deps.usage } : {}), ...(deps.logger ? { logger: deps.logger } : {}),
  };

  const verifyWith = (scheme: SchemeEngine<PaymentRequirement>, p: PaymentPayload, r: PaymentRequirement, resource: string): Verified => {
    if (p.id !== r.id) return { ok: false, reason: `the payment names requirement ${p.id}, which this resource does not accept` };
    if (r.scheme !== p.scheme || r.network !== p.network) return { ok: false, reason: `requirement ${r.id} is scheme ${r.scheme} on ${r.network}` };
    return scheme.verify(ctx, p, r, resource);
  };

  /** the JWT's claims and the requirement of this resource (at this gateway) they name, or why not */
  const bearer = async (
    token: string, pick: (claims: X402Claims) => PaymentRequirement | undefined, opts: { acceptExpired?: boolean } = {},
  ): Promise<{ claims: X402Claims; r: PaymentRequirement } | string> => {
    const t = await tokens.check(token, opts);
    if (!t.ok) return t.reason;
    const r = pick(t.claims);
    if (!r) return 'the JWT was issued for a requirement this resource does not accept';
    // the id hashes the gateway already; a bound token must name the same one besides
    if (t.claims.gateway !== undefined && t.claims.gateway !== r.gateway) return `the JWT was paid at gateway ${t.claims.gateway}, not this resource's`;
    return { claims: t.claims, r };
  };

  const authorize: PaymentEngine['authorize'] = async (token, pick, chunk) => {
    const b = await bearer(token, pick);
    if (typeof b === 'string') return b;
    const scheme = schemeOf(b.r);
    if (!scheme.admit) return `scheme ${b.r.scheme} sells no bearer access: pay each request`;
    return scheme.admit(ctx, b.claims, b.r, chunk);
  };

  /**
   * The answer of a settlement the report sends again, when it was made: looked up before the
   * admission, which the settlement's own landing makes fail (its policy Completed), on a JWT
   * checked but for its expiry (the settlement may be retried after it). Never settles.
   */
  const settledAlready = async (
    token: string, pick: (claims: X402Claims) => PaymentRequirement | undefined, amount: bigint | undefined, transaction: string,
  ): Promise<UsageAnswer | undefined> => {
    const b = await bearer(token, pick, { acceptExpired: true });
    if (typeof b === 'string') return undefined;
    return schemeOf(b.r).settledReport?.(ctx, b.claims, b.r, amount, transaction);
  };

  /**
   * A proof buys one answer (spent-proofs.ts): the first presentation that is answered spends it,
   * and any other presentation of it (a copy of the header, concurrent or later) is refused.
   * Spent only here, once the answer is made: a 503 or a refusal leaves the header good to resume.
   */
  const spentProofs = deps.spentProofs ?? redisSpentProofs(deps.redis, deps.redisPrefix);
  const spendProof = async (p: PaymentPayload, paid: Extract<Paid, { ok: true }>): Promise<Paid> => {
    const proof = p.payload.proof;
    if (proof === undefined) return paid; // a scheme without the payer's proof (exact: one settlement per transfer)
    const fresh = await spentProofs.spend(paid.payer, proof.signature, SPENT_PROOF_SECONDS).catch((err: Error) => {
      throw upstreamUnavailable(`the payment proof store (${spentProofs.store}) did not answer: ${err.message}; send the same Payment header again`);
    });
    if (fresh) return paid;
    const used = `this payment proof (signed at ${proof.signedAt}) was used already: a JWT was issued from it, and a proof is answered once`;
    const settled = paid.result.transaction !== undefined
      ? `; the payment itself is settled (transaction ${paid.result.transaction}, policy ${paid.result.policy ?? 'unknown'}): the payer signs a fresh proof over the same transaction to get its JWT again`
      : '; the payer signs a fresh proof to get a JWT';
    return { ok: false, reason: `${used}${settled}`, payer: paid.payer };
  };

  return {
    programId: deps.programId, pdas, clock, redis: deps.redis, redisPrefix: deps.redisPrefix, policies, chain,
    signInNonces: deps.signInNonces ?? redisSignInNonces(deps.redis, deps.redisPrefix),

    async pay(p, r, resource, scope) {
      const pid = paymentIdentifierOf(p);
      const scheme = schemeOf(r);
      // every check first, the proof included: a stored answer goes only to whoever proves to be the payer
      const v = verifyWith(scheme, p, r, resource);
      if (!v.ok) {
        if (pid !== undefined) await identifiers.check(scope, pid, fingerprintOf(p, r.id));
        return v;
      }
      const run = async (): Promise<Paid> => {
        try {
          const result = await scheme.settle(ctx, r, v);
          return { ok: true, result, payer: result.payer ?? v.payer };
        } catch (err) {
          if (err instanceof PaymentRefused) return { ok: false, reason: err.reason, payer: v.payer };
          throw err;
        }
      };
      const paid = pid === undefined ? await run() : await identifiers.once(scope, pid, fingerprintOf(p, r.id), run);
      // after the stored answer too: a payment identifier keeps the answer, the proof buys it once
      return paid.ok ? spendProof(p, paid) : paid;
    },

    verify: (p, r, resource) => verifyWith(schemeOf(r), p, r, resource),
    settle: (r, v) => schemeOf(r).settle(ctx, r, v),

    authorize,

    async answered(grant, served) {
      await schemeNamed(grant.scheme).answered?.(ctx, grant, served);
    },

    async report(token, pick, amount, transaction) {
      const made = transaction === undefined ? undefined : await settledAlready(token, pick, amount, transaction);
      if (made) return made;
      const grant = await authorize(token, pick, amount);
      if (typeof grant === 'string') return { admitted: false, reason: grant };
      const scheme = schemeNamed(grant.scheme);
      // the report was sent as a settlement (a transaction, or only settling requirements) for a grant that settles none
      if (!scheme.report) return { admitted: false, reason: 'the payment policy is not an UpTo authorization' };
      return scheme.report(ctx, grant, amount, transaction);
    },
  };
}
