/**
 * The payment engine: every check and every effect of the payment-gated protocol, built
 * once from X402Deps and used by both entry points, the Express middleware
 * (middleware.ts) and the HTTP facilitator (facilitator/). One implementation: a rule
 * added here holds for a Node merchant and for a merchant in any other language alike.
 *
 *   verify(payload, requirement)   the payload names the requirement, the transaction
 *                                  passes every pure check (verify-transaction.ts);
 *                                  nothing is sent
 *   settle(requirement, payment)   sends, confirms, reads back, signs the JWT, once per
 *                                  transaction signature (idempotency.ts, settlement.ts)
 *   authorize(token, pick, chunk)  the bearer path: the JWT, the policy still serving the
 *                                  requirement, and a pay-as-you-go chunk metered or a
 *                                  prepaid request drawn from its credit (prepaid/credit.ts)
 */
import type { Redis } from 'ioredis';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { systemClock, type Clock } from '../../src/kernel/domain/clock.js';
import { createIdempotency, type SettledResult } from './idempotency.js';
import { randomUUID } from 'node:crypto';
import { meterRequest, usageCounterKey, type UsageLedger } from './metering.js';
import { accountOutstandingKey, releaseCounts } from './account-outstanding.js';
import { upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { PaymentPayload } from './payload.js';
import { createPolicyCache, type PolicyCache } from './policy-cache.js';
import { requirementGrace, type PaymentRequirement, type Scheme } from './requirements.js';
import { proofProblem } from './proof.js';
import { chainRead, overdueReason, policyMismatch, settleExisting, settlePayment, type ChainDeps } from './settle.js';
import { createTokenCheck, type X402Claims, type X402Signer } from './tokens.js';
import { checkPaymentTransaction, type CheckedPayment } from './verify-transaction.js';
import type { Logger } from '../../infra/log/logger.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import type { AccountRead } from '../../infra/solana/accounts.js';
import { authorizeCredit, creditLeft, recordPaidCredit, type CreditDeps, type CreditGrant } from './prepaid/credit.js';
import { cachedCredits, type CreditLedger } from './prepaid/ledger.js';
import { createPayability, shortfall } from './payability.js';

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
}

/**
 * A payment that passed every check: a transaction to send, or (no transaction) a payer
 * who proved to be the payer and claims to hold a matching policy already.
 */
export type Verified =
  | { ok: true; payer: string; payment: CheckedPayment }
  | { ok: true; payer: string; existing: true }
  | { ok: false; reason: string };
export type Accepted = Extract<Verified, { ok: true }>;

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

export interface PaymentEngine {
  programId: string;
  pdas: PdaDeriver;
  clock: Clock;
  redis: Redis;
  redisPrefix: string;
  policies: PolicyCache;
  chain: ChainDeps;
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
  const idempotency = createIdempotency({
    redis: deps.redis, keyPrefix: deps.redisPrefix, leaseMs: chain.confirmTimeoutMs + 10_000, ttlSeconds: deps.idempotencyTtlSeconds ?? 86_400,
  });
  const graceSeconds = deps.subscriptionGraceSeconds ?? 259_200;
  const credits: CreditDeps = { redis: deps.redis, redisPrefix: deps.redisPrefix, policies, ...(deps.credits ? { ledger: cachedCredits(deps.credits) } : {}) };
  const payability = createPayability({ rpc: deps.rpc, programId: deps.programId, commitment, ttlMs: cacheMs, clock });
  // a paid credit serves as an existing policy only while it has room for a request; a pay-as-you-go
  // policy only while the payer can be charged (else the Payment transaction, with its approve, is sent)
  const usable = async (r: PaymentRequirement, policy: AccountRead & { kind: 'found' }) => {
    if (r.scheme === 'x402://prepaid') return creditLeft(credits, policy.address, r);
    if (r.scheme === 'x402://payg') return (await payability.problem(policy, r.amount)) === undefined;
    return true;
  };
  const settleDeps = { chain, signer: deps.signer, audience, clock, policies, jwtTtlSeconds: deps.jwtTtlSeconds ?? 3600, graceSeconds, usable };
  const nowSeconds = () => Math.floor(clock.now() / 1000);

  return {
    programId: deps.programId, pdas, clock, redis: deps.redis, redisPrefix: deps.redisPrefix, policies, chain,

    verify(p, r, resource) {
      if (p.id !== r.id) return { ok: false, reason: `the payment names requirement ${p.id}, which this resource does not accept` };
      if (r.scheme !== p.scheme || r.network !== p.network) return { ok: false, reason: `requirement ${r.id} is scheme ${r.scheme} on ${r.network}` };
      const now = nowSeconds();
      const proofOf = (payer: string, transactionSignature: string | undefined) =>
        proofProblem(p.payload.proof, payer, { requirementId: r.id, resource: r.resource ?? resource, transactionSignature }, now);
      if ('payer' in p.payload) {
        const problem = proofOf(p.payload.payer, undefined);
        return problem ? { ok: false, reason: problem } : { ok: true, payer: p.payload.payer, existing: true };
      }
      const check = checkPaymentTransaction(p.payload.serializedTransaction, r, { pdas, nowSeconds: now });
      if (!check.ok) return { ok: false, reason: `the payment transaction is not acceptable: ${check.reason}` };
      // before the idempotency entry: a stored answer goes only to whoever proves to be the payer
      const problem = proofOf(check.payment.payer, check.payment.signature);
      return problem ? { ok: false, reason: problem } : { ok: true, payer: check.payment.payer, payment: check.payment };
    },

    async settle(r, v) {
      const s = 'existing' in v ? await settleExisting(settleDeps, r, v.payer) : await idempotency.once(v.payment.signature, () => settlePayment(settleDeps, r, v.payment));
      // a transaction sent approved the delegation anew: what this node knew of the payer's funding is stale
      if (s.transaction !== undefined) payability.forget(pdas.userPayment(s.payer ?? v.payer, r.tokenMint));
      // the credit is recorded before its JWT leaves: what it buys must outlive Redis and the policy account
      if (r.scheme === 'x402://prepaid' && s.policy) {
        await recordPaidCredit(credits, {
          policy: s.policy, payer: s.payer ?? v.payer, gateway: r.gateway, requirementId: r.id, credit: r.amount, ...(s.transaction ? { transaction: s.transaction } : {}),
        }, nowSeconds());
      }
      return s;
    },

    async authorize(token, pick, chunk) {
      const t = await tokens.check(token);
      if (!t.ok) return t.reason;
      const r = pick(t.claims);
      if (!r) return 'the JWT was issued for a requirement this resource does not accept';
      // the id hashes the gateway already; a bound token must name the same one besides
      if (t.claims.gateway !== undefined && t.claims.gateway !== r.gateway) return `the JWT was paid at gateway ${t.claims.gateway}, not this resource's`;
      if (r.scheme === 'x402://prepaid') {
        const drawn = await authorizeCredit(credits, t.claims, r, chunk, nowSeconds());
        if (typeof drawn === 'string') return drawn;
        return { payer: t.claims.sub, policy: t.claims.policy, scheme: r.scheme, network: r.network, requirementId: r.id, prepaid: drawn };
      }
      const read = await chainRead('getAccountInfo', () => policies.get(t.claims.policy));
      if (read.kind !== 'found') return `the payment policy ${t.claims.policy} no longer exists`;
      const mismatch = policyMismatch(read, r);
      if (mismatch) return `the payment policy ${t.claims.policy} ${mismatch}`;
      const grant: X402Grant = { payer: t.claims.sub, policy: t.claims.policy, scheme: r.scheme, network: r.network, requirementId: r.id };
      const type = asPolicyType(read.data['policy_type']);
      if (r.scheme === 'x402://upto') {
        // served now, pulled by the merchant later (up to the maximum, or the amount it reports)
        // (an amount above the maximum is refused by name where it is settled)
        const pulled = chunk !== undefined && chunk < r.amount ? chunk : r.amount;
        const unpayable = await chainRead('getAccountInfo', () => payability.problem(read, pulled));
        return unpayable ? `the payment policy ${t.claims.policy} ${unpayable}` : grant;
      }
      if (r.scheme !== 'x402://payg') {
        const overdue = overdueReason(type, nowSeconds(), requirementGrace(r, graceSeconds));
        return overdue ? `the payment policy ${t.claims.policy} ${overdue}` : grant;
      }
      if (type.kind !== 'PayAsYouGo') return 'the payment policy is not pay-as-you-go';
      // served now, charged later: only while the payer's account can fund what is not charged yet
      const funding = await chainRead('getAccountInfo', () => payability.funding(read));
      if (!funding.ok) return `the payment policy ${t.claims.policy} ${funding.reason}`;
      const funds = {
        amount: funding.amount, exposure: r.maxUnsettledAmount,
        refuse: (c: bigint, unsettled: bigint) => `the payment policy ${t.claims.policy} ${shortfall(funding, c, unsettled)}`,
      };
      // with a ledger, the chunk is written to Postgres once Redis counted it, before the answer (the settler charges the ledger)
      const requestId = randomUUID();
      const ledger = deps.usage ? { ledger: deps.usage, requestId, gateway: r.gateway, userPayment: text(read.data, 'user_payment') } : undefined;
      let m: Awaited<ReturnType<typeof meterRequest>>;
      try {
        m = await meterRequest(deps.redis, deps.redisPrefix, t.claims.policy, type, chunk ?? r.amount, nowSeconds(), ledger, funds);
      } catch (err) {
        // the usage ledger (Postgres) or the counter (Redis) did not answer: nothing was admitted, so it is the
        // caller's to retry, as when the chain is unreachable (a 503, never a 500; the soak found it in a PostgreSQL restart)
        throw upstreamUnavailable(`pay-as-you-go metering is unavailable: ${(err as Error).message}`);
      }
      if (!m.ok) return m.reason;
      const metered = { chunk: m.chunk.toString(), periodTotal: m.periodTotal.toString(), periodLimit: m.periodLimit.toString(), periodEnd: Number(m.periodEnd) };
      // the ledger's row (a free request has none)
      return { ...grant, metered: ledger && m.chunk > 0n ? { ...metered, requestId } : metered };
    },

    async answered(grant, served) {
      const requestId = grant.metered?.requestId;
      if (!deps.usage || requestId === undefined) return;
      try {
        if (served) {
          if (!(await deps.usage.served(requestId))) deps.logger?.warn({ requestId, policy: grant.policy }, 'pay-as-you-go request served after its reservation was dropped: not charged');
          return;
        }
        const row = await deps.usage.unserved(requestId);
        if (!row) return;
        // this process counted it (the grant came from the script): take it back from the period's counter and the account's outstanding
        const counts = [{ key: usageCounterKey(deps.redisPrefix, row.policy, row.periodStart), amount: row.chunk }];
        if (row.userPayment) counts.push({ key: accountOutstandingKey(deps.redisPrefix, row.userPayment), amount: row.chunk });
        await releaseCounts(deps.redis, counts);
      } catch (err) {
        deps.logger?.warn({ err: (err as Error).message, requestId, served }, 'pay-as-you-go request end not recorded; its reservation is dropped at its bound');
      }
    },
  };
}
