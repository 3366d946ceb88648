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
 *    for X402_CACHE_MS, policy-cache.ts) and must still be Active (a `deferred` one: or
 *    Completed, paid through next_payment_due + its grace) with the requirement's
 *    terms; an `x402://payg` request is metered (metering.ts) at the requirement's amount,
 *    or at `options.price(req)`; an `x402://prepaid` request draws its price
 *    (pricePerRequest, or `options.price(req)`) from the credit paid up front
 *    (prepaid/credit.ts), and is refused once the credit cannot cover it. Then next(),
 *    with `res.locals.x402` describing the payer.
 *    Otherwise 402 as in 1, with the reason.
 * An unreachable chain or key store is a 503 in the error envelope, never a 402.
 *
 * `options.wire: 'standard'` answers in the x402 v2 standard transport instead
 * (standard/codec.ts): the 402 carries `PAYMENT-REQUIRED` (base64 JSON PaymentRequired:
 * resource, accepts in the standard form, error) and its body is that PaymentRequired in the
 * error envelope; a paid answer carries `PAYMENT-RESPONSE` (base64 JSON SettleResponse:
 * success, transaction, network, payer, extra.policy) and the same `{jwt, message}` body.
 * Either wire reads both request headers: `Payment` (payload.ts) and `PAYMENT-SIGNATURE`
 * (a standard PaymentPayload whose `payload` is the Tributary payload, `accepted.extra.id`
 * the requirement paid). A header that does not decode is a 402 with the reason.
 *
 * `options.signIn` (plugins/siwx.ts): the 402 declares the sign-in-with-x extension (a
 * CAIP-122 challenge), and a `SIGN-IN-WITH-X` header of a wallet that holds a matching policy
 * is answered as that policy's payment is (`{jwt, message}`, nothing sent); a stale,
 * replayed, foreign or badly signed message is a 402 with the reason.
 *
 * `options.exact` (standard wire, local engine; standard/exact-pay.ts): the 402 offers x402
 * `exact` first (the service's fee payer in extra.feePayer), and a PAYMENT-SIGNATURE of
 * scheme `exact` is verified and settled by the node's exact facilitator, then the request
 * goes on to the handler (paid per request, no JWT) with `PAYMENT-RESPONSE` its
 * SettleResponse; a refusal is a 402 with the reason, a settlement still pending a 503 with
 * Retry-After. A remote facilitator is refused at start: a merchant elsewhere sells exact
 * through @x402/express with this service as its facilitator.
 */
import type { Request, RequestHandler, Response } from 'express';
import { createPaymentEngine, type PaymentEngine, type X402Deps, type X402Grant } from './engine.js';
import { decodePaymentHeader, type DecodedPayment } from './payload.js';
import { paymentRequiredHeader, X402_VERSION, type PaymentRequirement, type PaymentRequirementInput } from './requirements.js';
import { acceptedRequirement, normalizeRequirement } from './requirement-forms.js';
import { localBackend, remoteBackend, type PaymentBackend, type RemoteFacilitatorDeps } from './backend.js';
import { onResponseEnd } from './response-end.js';
import type { SettledResult } from './idempotency.js';
import {
  decodeSignatureHeader, encodeRequiredHeader, encodeResponseHeader, PAYMENT_REQUIRED, PAYMENT_RESPONSE, PAYMENT_SIGNATURE, tributaryPayment, type StandardPayload,
} from './standard/codec.js';
import { standardPaymentRequired, type ResourceDescription, type StandardRequirement } from './standard/requirements.js';
import { standardSettlement } from './standard/settled.js';
import { createSignIn, SIGN_IN_WITH_X, type SignInOptions } from './plugins/siwx.js';
import { offeredExact, payExact, type ExactOffer } from './standard/exact-pay.js';
import { AppError } from '../../src/kernel/http/errors.js';
export type { X402Deps, X402Grant } from './engine.js';
export type { RemoteFacilitatorDeps } from './backend.js';

export interface PaymentRequiredOptions {
  /** what this request costs, in smallest units: the pay-as-you-go chunk (default the requirement's amount) or the prepaid draw (default pricePerRequest) */
  price?: (req: Request) => number | bigint;
  /** 'spec' (default): SPEC.md's headers; 'standard': the x402 v2 standard's base64 JSON headers */
  wire?: 'spec' | 'standard';
  /** the standard wire's PaymentRequired.resource: what is sold and its media type */
  resource?: ResourceDescription;
  /**
   * Sign-In-With-X (plugins/siwx.ts): the 402 declares the sign-in-with-x extension, and a
   * SIGN-IN-WITH-X header of a wallet holding a matching policy is answered as that policy's
   * payment is (a JWT, nothing sent). Needs the local engine (X402Deps).
   */
  signIn?: boolean | SignInOptions;
  /** x402 `exact`, offered first and settled by the node's exact facilitator (standard wire, local engine) */
  exact?: ExactOffer;
}

/** How long a payer waits before sending an exact payment whose settlement is pending again. */
const EXACT_RETRY_AFTER_SECONDS = 5;

type RequestPayment = DecodedPayment | { ok: true; exact: StandardPayload };

/** The payment a request carries in either header, undefined when it carries none; `offered`: the route's schemes. */
function requestPayment(req: Request, offered: readonly string[]): RequestPayment | undefined {
  const spec = req.get('payment');
  const standard = req.get(PAYMENT_SIGNATURE);
  if (spec !== undefined && standard !== undefined) return { ok: false, reason: `send one payment: a Payment or a ${PAYMENT_SIGNATURE} header, not both` };
  if (spec !== undefined) return decodePaymentHeader(spec);
  if (standard === undefined) return undefined;
  const decoded = decodeSignatureHeader(standard);
  if (!decoded.ok) return decoded;
  const scheme = decoded.payload.accepted.scheme;
  if (!offered.includes(scheme)) return { ok: false, reason: `accepted.scheme ${JSON.stringify(scheme)} is not offered by this resource; it offers ${offered.join(', ')}` };
  return scheme === 'exact' ? { ok: true, exact: decoded.payload } : tributaryPayment(decoded.payload);
}

function backendOf(deps: X402Deps | RemoteFacilitatorDeps): { backend: PaymentBackend; engine?: PaymentEngine } {
  if ('facilitatorUrl' in deps) return { backend: remoteBackend(deps) };
  const engine = createPaymentEngine(deps);
  return { backend: localBackend(engine), engine };
}

export function x402Grant(res: Response): X402Grant | undefined {
  return (res.locals as { x402?: X402Grant }).x402;
}

/**
 * `deps`: the chain connection (X402Deps: verified and settled here), or a remote
 * facilitator (RemoteFacilitatorDeps: verified and settled by the Tributary service).
 */
export function paymentRequired(
  inputs: readonly PaymentRequirementInput[], deps: X402Deps | RemoteFacilitatorDeps, options: PaymentRequiredOptions = {},
): RequestHandler {
  if (inputs.length === 0) throw new Error('paymentRequired needs at least one requirement');
  // a local engine caps each subscription's grace at its SUBSCRIPTION_GRACE_SECONDS (a remote facilitator caps its own)
  const graceCap = 'facilitatorUrl' in deps ? undefined : deps.subscriptionGraceSeconds;
  const requirements = inputs.map((i) => normalizeRequirement(i, deps.programId, graceCap));
  const { backend, engine } = backendOf(deps);
  if (options.signIn && !engine) throw new Error('signIn needs the local engine (X402Deps): a remote facilitator cannot read a wallet\'s policies for this route');
  const signIn = options.signIn && engine ? createSignIn(engine, requirements, options.signIn === true ? {} : options.signIn) : undefined;
  const clock = backend.clock;
  const byId = new Map(requirements.map((r) => [r.id, r]));

  const requestResource = (req: Request): string =>
    `${deps.resourceBase ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`}${req.originalUrl.split('?')[0] ?? ''}`;

  const standard = options.wire === 'standard';
  if (options.exact && (!standard || 'facilitatorUrl' in deps)) {
    throw new Error('exact needs the standard wire and the local engine (X402Deps): with a remote facilitator, sell exact through @x402/express');
  }
  const exact = options.exact;
  const offeredSchemes = [...new Set([...(exact ? ['exact'] : []), ...requirements.map((r) => r.scheme)])];

  /** The exact requirement at the head of the 402's accepts; none when its facilitator cannot answer (the other schemes still sell). */
  async function exactAccepts(): Promise<StandardRequirement[]> {
    if (!exact) return [];
    const r = await offeredExact(exact).catch((err: unknown) => { deps.logger?.warn({ err }, 'x402 exact left out of the 402'); return undefined; });
    return r ? [r] : [];
  }

  async function refuse(req: Request, res: Response, reason: string): Promise<void> {
    const resource = requestResource(req);
    const accepts = requirements.map((r) => acceptedRequirement(r, resource, Math.floor(clock.now() / 1000)));
    const envelope = { error: reason, code: 'payment_required', success: false, timestamp: clock.now() };
    const extensions = signIn ? { extensions: signIn.declare(resource) } : {};
    if (standard) {
      const tributary = standardPaymentRequired(accepts, resource, reason, options.resource);
      const required = { ...tributary, accepts: [...(await exactAccepts()), ...tributary.accepts], ...extensions };
      res.status(402).set(PAYMENT_REQUIRED, encodeRequiredHeader(required)).set('Cache-Control', 'no-store').json({ ...required, ...envelope });
      return;
    }
    res.status(402).set('Payment-Required', paymentRequiredHeader(accepts[0]!)).json({ x402Version: X402_VERSION, accepts, ...extensions, ...envelope });
  }

  function paid(res: Response, result: SettledResult, r: PaymentRequirement): void {
    if (standard) res.set(PAYMENT_RESPONSE, encodeResponseHeader(standardSettlement(result, r)));
    else res.set('Payment-Response', result.paymentResponse);
    res.status(200).json(result.body);
  }

  async function pay(req: Request, res: Response, decoded: DecodedPayment): Promise<void> {
    if (!decoded.ok) return refuse(req, res, decoded.reason);
    const p = decoded.payment;
    const r = byId.get(p.id);
    if (!r) return refuse(req, res, `the payment names requirement ${p.id}, which this resource does not accept`);
    const settled = await backend.pay(p, r, requestResource(req));
    if (!settled.ok) return refuse(req, res, settled.reason);
    paid(res, settled.result, r);
  }

  async function payStandardExact(req: Request, res: Response, next: () => void, payload: StandardPayload): Promise<void> {
    if (!exact) return refuse(req, res, 'this resource does not offer the exact scheme');
    const outcome = await payExact(exact, payload);
    if (outcome.kind === 'pending') throw new AppError('upstream_unavailable', outcome.reason, { 'Retry-After': String(EXACT_RETRY_AFTER_SECONDS) });
    if (outcome.kind === 'refused') return refuse(req, res, outcome.reason);
    res.set(PAYMENT_RESPONSE, encodeResponseHeader(outcome.settled));
    next();
  }

  return async (req, res, next) => {
    try {
      const payment = requestPayment(req, offeredSchemes);
      if (payment !== undefined && 'exact' in payment) return await payStandardExact(req, res, next, payment.exact);
      if (payment !== undefined) return await pay(req, res, payment);
      const siwx = signIn ? req.get(SIGN_IN_WITH_X) : undefined;
      if (signIn && siwx !== undefined) {
        const signed = await signIn.check(siwx, requestResource(req));
        return signed.ok ? paid(res, signed.result, signed.requirement) : await refuse(req, res, signed.reason);
      }
      const auth = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
      if (!auth?.[1]) return await refuse(req, res, `payment required: send a ${standard ? PAYMENT_SIGNATURE : 'Payment'} header or a bearer JWT`);
      const chunk = options.price ? BigInt(options.price(req)) : undefined;
      const grant = await backend.authorize(auth[1], requirements, requestResource(req), chunk);
      if (typeof grant === 'string') return await refuse(req, res, grant);
      (res.locals as { x402?: X402Grant }).x402 = grant;
      // a metered chunk is charged, a prepaid draw kept, only if this request is served (response-end.ts)
      if ((grant.metered?.requestId ?? grant.prepaid?.requestId) !== undefined) onResponseEnd(res, (served) => void backend.answered(grant, served));
      next();
    } catch (err) {
      deps.logger?.debug({ err }, 'x402 middleware failed');
      next(err);
    }
  };
}
