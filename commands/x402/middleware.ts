/**
 * `paymentRequired(requirements, deps)`: an Express middleware that sells access to any
 * route under the payment-gated protocol (SPEC.md, "Payment-gated resource flow").
 *
 * SPEC's flow applies to "any method on the protected path", so protect the path, not one
 * method: `app.all` runs the guard for every method of the path (`app.use('/reports',
 * guard)` for every path under a prefix). Create the guard once and share it, so every
 * method accepts the same requirement ids, Payment headers and JWTs.
 *
 *   const guard = paymentRequired([{ scheme: 'deferred', network, amount: 1_000_000,
 *     recipient, gateway, tokenMint, paymentFrequency: 'Monthly' }], deps);
 *   app.all('/report', guard, handler);              // GET, POST, PUT, PATCH, DELETE, ...
 *
 * (`app.get('/report', guard, handler)` would leave the other methods unprotected, or to
 * whatever else answers them.)
 *
 * 1. No `Payment` header and no valid bearer JWT → 402; header `Payment-Required` with
 *    scheme, network, resource, id, amount, currency, recipient, gateway, tokenMint of the
 *    first (preferred) requirement; body `{x402Version: 2, accepts: [every requirement],
 *    error, code: "payment_required", success: false, timestamp}`.
 * 2. `Payment: <base64 payload>` (payload.ts documents it) → the transaction is checked
 *    against the requirement it names (verify-transaction.ts; a failed check is a 402 with
 *    the reason and nothing is sent), settled once per transaction signature
 *    (idempotency.ts, settle.ts) → 200, header `Payment-Response: scheme=…,network=…,id=…,
 *    timestamp=<unix ms>,policy=<address>[,transaction=<signature>]`, body `{jwt, message}`.
 * 3. `Authorization: Bearer <JWT>` (tokens.ts) → the policy is read from the chain (cached
 *    for X402_CACHE_MS, policy-cache.ts) and must still be Active with the requirement's
 *    terms; a `deferred` one must be paid through: next_payment_due + SUBSCRIPTION_GRACE_SECONDS
 *    > now, read from the chain account (overdue → 402 with the requirements); an `x402://payg` request is metered (metering.ts) at the requirement's amount,
 *    or at `options.price(req)`. Then next(), with `res.locals.x402` describing the payer.
 *    Otherwise 402 as in 1, with the reason.
 * An unreachable chain or key store is a 503 in the error envelope, never a 402.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from '../../infra/log/logger.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createPdaDeriver } from '../../src/domain/pda.js';
import { asPolicyType } from '../../src/domain/policy-type.js';
import { systemClock, type Clock } from '../../src/app/context.js';
import { createIdempotency } from './idempotency.js';
import { meterRequest, type UsageLedger } from './metering.js';
import { randomUUID } from 'node:crypto';
import { decodePaymentHeader } from './payload.js';
import { createPolicyCache } from './policy-cache.js';
import {
  acceptedRequirement, normalizeRequirement, paymentRequiredHeader, X402_VERSION, type PaymentRequirement, type PaymentRequirementInput, type Scheme,
} from './requirements.js';
import { chainRead, overdueReason, PaymentRefused, policyMismatch, type ChainDeps } from './settle.js';
import { settleExisting, settlePayment } from './settlement.js';
import { proofProblem } from './proof.js';
import { createTokenCheck, type X402Signer } from './tokens.js';
import { checkPaymentTransaction } from './verify-transaction.js';

export interface X402Deps {
  rpc: RpcClient;
  programId: string;
  /** commitment of confirmation and reads; default confirmed */
  commitment?: Commitment;
  redis: Redis;
  /** prefix of the Redis keys (idempotency, metering) */
  redisPrefix: string;
  signer: X402Signer;
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
  /** access follows payment: a subscription is honoured until next_payment_due + this; default 259200 (3 days) */
  subscriptionGraceSeconds?: number;
  /** origin of resource URLs in 402 answers (e.g. https://api.example.com); default the request's own */
  resourceBase?: string;
  /** durable record of every metered chunk (the service's Postgres ledger, which the settler charges); default none */
  usage?: UsageLedger;
}

export interface PaymentRequiredOptions {
  /** the pay-as-you-go chunk of this request, in smallest units; default the requirement's amount */
  price?: (req: Request) => number | bigint;
}

/** What the middleware leaves in `res.locals.x402` for the protected handler. */
export interface X402Grant {
  payer: string;
  policy: string;
  scheme: Scheme;
  network: string;
  requirementId: string;
  metered?: { chunk: string; periodTotal: string; periodLimit: string; periodEnd: number; requestId?: string };
}

export function x402Grant(res: Response): X402Grant | undefined {
  return (res.locals as { x402?: X402Grant }).x402;
}

export function paymentRequired(inputs: readonly PaymentRequirementInput[], deps: X402Deps, options: PaymentRequiredOptions = {}): RequestHandler {
  if (inputs.length === 0) throw new Error('paymentRequired needs at least one requirement');
  const requirements = inputs.map((i) => normalizeRequirement(i, deps.programId));
  const clock = deps.clock ?? systemClock;
  const cacheMs = deps.cacheMs ?? 5000;
  const commitment = deps.commitment ?? 'confirmed';
  const pdas = createPdaDeriver(deps.programId);
  const chain: ChainDeps = { rpc: deps.rpc, pdas, commitment, confirmTimeoutMs: deps.confirmTimeoutMs ?? 30_000 };
  const policies = createPolicyCache({ rpc: deps.rpc, programId: deps.programId, commitment, ttlMs: cacheMs, clock });
  const tokens = createTokenCheck(deps.signer, { cacheMs, clock });
  const idempotency = createIdempotency({
    redis: deps.redis, keyPrefix: deps.redisPrefix, leaseMs: chain.confirmTimeoutMs + 10_000, ttlSeconds: deps.idempotencyTtlSeconds ?? 86_400,
  });
  const byId = new Map(requirements.map((r) => [r.id, r]));
  const graceSeconds = deps.subscriptionGraceSeconds ?? 259_200;
  const settleDeps = { chain, signer: deps.signer, clock, policies, jwtTtlSeconds: deps.jwtTtlSeconds ?? 3600, graceSeconds };

  const requestResource = (req: Request): string =>
    `${deps.resourceBase ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`}${req.originalUrl.split('?')[0] ?? ''}`;

  function refuse(req: Request, res: Response, reason: string): void {
    const resource = requestResource(req);
    const accepts = requirements.map((r) => acceptedRequirement(r, resource));
    res.status(402).set('Payment-Required', paymentRequiredHeader(accepts[0]!)).json({
      x402Version: X402_VERSION, accepts, error: reason, code: 'payment_required', success: false, timestamp: clock.now(),
    });
  }

  async function pay(req: Request, res: Response, header: string): Promise<void> {
    const decoded = decodePaymentHeader(header);
    if (!decoded.ok) return refuse(req, res, decoded.reason);
    const p = decoded.payment;
    const r = byId.get(p.id);
    if (!r) return refuse(req, res, `the payment names requirement ${p.id}, which this resource does not accept`);
    if (r.scheme !== p.scheme || r.network !== p.network) return refuse(req, res, `requirement ${r.id} is scheme ${r.scheme} on ${r.network}`);
    const nowSeconds = Math.floor(clock.now() / 1000);
    const proofOf = (payer: string, transactionSignature: string | undefined) =>
      proofProblem(p.payload.proof, payer, { requirementId: r.id, resource: r.resource ?? requestResource(req), transactionSignature }, nowSeconds);
    try {
      if ('payer' in p.payload) {
        const problem = proofOf(p.payload.payer, undefined);
        if (problem) return refuse(req, res, problem);
        const result = await settleExisting(settleDeps, r, p.payload.payer);
        res.status(200).set('Payment-Response', result.paymentResponse).json(result.body);
        return;
      }
      const check = checkPaymentTransaction(p.payload.serializedTransaction, r, { pdas, nowSeconds });
      if (!check.ok) return refuse(req, res, `the payment transaction is not acceptable: ${check.reason}`);
      // before the idempotency entry: a stored answer goes only to whoever proves to be the payer
      const problem = proofOf(check.payment.payer, check.payment.signature);
      if (problem) return refuse(req, res, problem);
      const result = await idempotency.once(check.payment.signature, () => settlePayment(settleDeps, r, check.payment));
      res.status(200).set('Payment-Response', result.paymentResponse).json(result.body);
    } catch (err) {
      if (err instanceof PaymentRefused) return refuse(req, res, err.reason);
      throw err;
    }
  }

  async function bearer(req: Request, res: Response, token: string): Promise<X402Grant | string> {
    const t = await tokens.check(token);
    if (!t.ok) return t.reason;
    const r: PaymentRequirement | undefined = byId.get(t.claims.requirementId);
    if (!r) return 'the JWT was issued for a requirement this resource does not accept';
    const read = await chainRead('getAccountInfo', () => policies.get(t.claims.policy));
    if (read.kind !== 'found') return `the payment policy ${t.claims.policy} no longer exists`;
    const mismatch = policyMismatch(read, r);
    if (mismatch) return `the payment policy ${t.claims.policy} ${mismatch}`;
    const grant: X402Grant = { payer: t.claims.sub, policy: t.claims.policy, scheme: r.scheme, network: r.network, requirementId: r.id };
    const type = asPolicyType(read.data['policy_type']);
    if (r.scheme !== 'x402://payg') {
      const overdue = overdueReason(type, Math.floor(clock.now() / 1000), graceSeconds);
      return overdue ? `the payment policy ${t.claims.policy} ${overdue}` : grant;
    }
    if (type.kind !== 'PayAsYouGo') return 'the payment policy is not pay-as-you-go';
    const chunk = BigInt(options.price ? options.price(req) : r.amount);
    const requestId = randomUUID();
    const ledger = deps.usage ? { ledger: deps.usage, requestId, gateway: r.gateway } : undefined;
    const m = await meterRequest(deps.redis, deps.redisPrefix, t.claims.policy, type, chunk, Math.floor(clock.now() / 1000), ledger);
    if (!m.ok) return m.reason;
    const metered = { chunk: m.chunk.toString(), periodTotal: m.periodTotal.toString(), periodLimit: m.periodLimit.toString(), periodEnd: Number(m.periodEnd) };
    return { ...grant, metered: ledger ? { ...metered, requestId } : metered };
  }

  return async (req, res, next) => {
    try {
      const payment = req.get('payment');
      if (payment !== undefined) return await pay(req, res, payment);
      const auth = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
      if (!auth?.[1]) return refuse(req, res, 'payment required: send a Payment header or a bearer JWT');
      const grant = await bearer(req, res, auth[1]);
      if (typeof grant === 'string') return refuse(req, res, grant);
      (res.locals as { x402?: X402Grant }).x402 = grant;
      next();
    } catch (err) {
      deps.logger?.debug({ err }, 'x402 middleware failed');
      next(err);
    }
  };
}
