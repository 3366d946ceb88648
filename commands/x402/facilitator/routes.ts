/**
 * The x402 facilitator over HTTP (x402 v2's /supported, /verify, /settle, discovery) for
 * merchants that are not Node processes, plus /usage (metering against a JWT) and
 * /resources (registering what discovery lists). Verify, settle and usage run the payment
 * engine the middleware runs (engine.ts): one set of checks, two entry points.
 */
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../../src/kernel/config/config.js';
import type { Clock } from '../../../src/kernel/domain/clock.js';
import type { Db } from '../../../infra/postgres/database.js';
import type { TokenVerifier } from '../../../src/kernel/auth/gateway-token.js';
import type { GatewayLookup } from '../../../src/kernel/auth/gateway-lookup.js';
import type { Api } from '../../../infra/http/routes.js';
import { createRateLimit } from '../../../infra/http/redis-rate-limit.js';
import type { Logger } from '../../../infra/log/logger.js';
import { rateLimitPrefix } from '../../../src/kernel/names/index.js';
import { limitSchema, offsetSchema } from '../../../src/kernel/http/schema.js';
import { invalid } from '../../../src/kernel/http/errors.js';
import { createPaymentEngine, type X402Deps } from '../engine.js';
import { createPaymentIdentifiers, PAYMENT_IDENTIFIER } from '../payment-identifier.js';
import { SCHEMES, X402_VERSION, type PaymentRequirementInput } from '../requirements.js';
import { acceptedRequirement } from '../requirement-forms.js';
import { callerGateway, FACILITATOR_AUTH_ERRORS, FACILITATOR_SECURITY, requireFacilitatorAuth, requireOwnGateway } from './auth.js';
import { discoverResources, registerResource, type ResourceInput } from './resources.js';
import { normalizeOrigin, normalizeResourceUrl, type ResourceUrlPolicy } from './resource-url.js';
import { TOKEN_FILE, verifyOrigin } from './origin-proofs.js';
import { createOriginFetcher } from './origin-fetch.js';
import {
  discoveryListSchema, exchangeBodySchema, originVerifiedSchema, originVerifyBodySchema, registeredResourceSchema, resourceBodySchema,
  settleAnswerSchema, supportedSchema, usageAnswerSchema, usageBodySchema, verifyAnswerSchema,
} from './schemas.js';
import { reportUsage, settlePayment, verifyPayment, type FacilitatorDeps } from './service.js';
import { requirementFromWire } from './wire.js';
import { isStandardExchange, settleStandard, standardErrorFields, standardExchangeBodySchema, standardRequirementOf, standardSettleAnswerSchema, verifyStandard, type StandardExchange } from './standard.js';
import { onResponseEnd } from '../response-end.js';
import type { ExactFacilitator } from '../exact/facilitator.js';
import { exactExchangeBodySchema, isExactExchange, type ExactExchange } from '../exact/wire.js';

type Wire = PaymentRequirementInput & { id?: string; extra?: { programId?: string } };
type ExchangeBody = { paymentPayload: unknown; paymentRequirements: Wire } | StandardExchange | ExactExchange;
/** Tributary's own shape, or the x402 v2 standard's (standard.ts) */
const exchangeBody = { anyOf: [exchangeBodySchema, standardExchangeBodySchema, exactExchangeBodySchema] };
const STANDARD_SHAPE = 'Both shapes are taken: Tributary\'s ({paymentPayload: the Payment header\'s JSON, paymentRequirements: an accepts entry}) and the x402 v2 '
  + 'standard\'s, as @x402/core\'s HTTPFacilitatorClient sends it (url = <service>/v1/x402): paymentPayload a PaymentPayload whose `payload` is the '
  + 'Tributary payload, `accepted` the requirement paid (extra.id names it), `resource.url` the URL the payer\'s proof names; paymentRequirements in the standard form.';
type UsageBody = { jwt: string; paymentRequirements: Wire | Wire[]; amount?: number | string; transaction?: string };

export interface FacilitatorRouteDeps {
  /** the node's x402 collaborators (chain, Redis, key ring, settings), shared with the demo resource */
  x402: X402Deps;
  db: Db;
  dbRead: Db;
  redis: Redis;
  clock: Clock;
  keyRing: TokenVerifier;
  /** the gateway's keys now: a credential of a wallet that is no longer the gateway's is refused */
  gatewayKeys: GatewayLookup;
  config: Pick<Config, 'redis' | 'x402' | 'solana' | 'http' | 'webhooks' | 'rateLimit'>;
  logger: Logger;
  /** x402 `exact` with the service as fee payer (commands/x402/exact); absent: not offered */
  exact?: ExactFacilitator;
}

/** What every facilitator route shares: the engine's operations, the caller's authentication, the deployment's terms. */
interface Facilitator {
  ctx: FacilitatorRouteDeps;
  deps: FacilitatorDeps;
  auth: RequestHandler;
  programId: string;
  network: string;
  graceCap: number | undefined;
}

/** The facilitator, in the order the OpenAPI document lists it: the exchange (supported, verify, settle), usage, resources. */
export function registerFacilitatorRoutes(api: Api, ctx: FacilitatorRouteDeps): void {
  const { x402 } = ctx;
  const engine = createPaymentEngine(x402);
  const identifiers = createPaymentIdentifiers({
    redis: ctx.redis, keyPrefix: ctx.config.redis.prefix, ttlSeconds: ctx.config.x402.idempotencyTtlSeconds, waitMs: ctx.config.x402.confirmTimeoutMs + 10_000,
  });
  const f: Facilitator = {
    ctx, deps: { engine, identifiers }, auth: requireFacilitatorAuth(ctx.db, ctx.keyRing, ctx.gatewayKeys),
    programId: ctx.config.solana.programId, network: ctx.config.solana.network, graceCap: x402.subscriptionGraceSeconds,
  };
  registerExchangeRoutes(api, f);
  registerUsageRoute(api, f);
  registerResourceRoutes(api, f);
}

/** /supported, /verify and /settle: the x402 v2 facilitator exchange, in SPEC.md's shape and the standard one, `exact` included. */
function registerExchangeRoutes(api: Api, { ctx, deps, auth, programId, network, graceCap }: Facilitator): void {
  api.route({
    method: 'get',
    path: '/v1/x402/supported',
    summary: 'x402 facilitator: the schemes, networks and extensions this deployment verifies and settles',
    tags: ['x402'],
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'x402 v2 SupportedResponse', schema: supportedSchema } },
    async handler() {
      const exact = await ctx.exact?.supportedKind(network);
      return {
        body: {
          kinds: [...SCHEMES.map((scheme) => ({ x402Version: X402_VERSION, scheme, network, extra: { programId } })), ...(exact ? [exact.kind] : [])],
          extensions: [PAYMENT_IDENTIFIER],
          signers: exact ? { 'solana:*': exact.signers } : {},
        },
      };
    },
  });

  api.route<Record<string, never>, Record<string, never>, ExchangeBody>({
    method: 'post',
    path: '/v1/x402/verify',
    summary: 'x402 facilitator: check a payment against requirements; nothing is sent',
    description: 'Every check the middleware makes on a Payment header. A payload that fails any of them: 200 `{isValid: false, invalidReason}`. '
      + 'Malformed requirements: 400. A payment identifier already used for another payload: 409. '
      + STANDARD_SHAPE,
    tags: ['x402'],
    security: FACILITATOR_SECURITY,
    before: [standardErrorFields('verify'), auth],
    body: exchangeBody,
    responses: {
      200: { description: 'x402 v2 VerifyResponse', schema: verifyAnswerSchema },
      400: { description: 'the requirements are not valid terms, or the payment identifier is malformed' },
      ...FACILITATOR_AUTH_ERRORS,
      409: { description: 'the payment identifier was used for another payment' },
    },
    async handler({ body, res }) {
      if (isExactExchange(body) && ctx.exact) return { body: await ctx.exact.verify(body.paymentPayload, body.paymentRequirements) };
      if (isStandardExchange(body)) {
        requireOwnGateway(res, standardRequirementOf(body, programId, graceCap).gateway);
        return { body: await verifyStandard(deps, callerGateway(res), body, programId, graceCap) };
      }
      const r = requirementFromWire(body.paymentRequirements, programId, graceCap);
      requireOwnGateway(res, r.gateway);
      return { body: await verifyPayment(deps, callerGateway(res), body.paymentPayload, r) };
    },
  });

  api.route<Record<string, never>, Record<string, never>, ExchangeBody>({
    method: 'post',
    path: '/v1/x402/settle',
    summary: 'x402 facilitator: send a verified payment, confirm it, answer the JWT',
    description: 'Verifies as /verify does, then sends, confirms and reads the policy back, once per transaction signature; answers the JWT '
      + 'and Payment-Response the middleware would have. A refused payment: 200 `{success: false, errorReason}` and nothing sent. '
      + 'With extensions["payment-identifier"]: the same id and payload get the stored answer; another payload: 409. An unreachable chain: 503. '
      + STANDARD_SHAPE + ' Its answer is the standard SettleResponse: `transaction` always (for a policy the payer held already, its last payment '
      + 'or creation signature from the read model, "" before the read model has it), Tributary\'s facts in `extra` (policy, jwt, expiresAt, requirementId, scheme, created).',
    tags: ['x402'],
    security: FACILITATOR_SECURITY,
    before: [standardErrorFields('settle'), auth],
    body: exchangeBody,
    responses: {
      200: { description: 'x402 v2 SettlementResponse, with policy and jwt', schema: { anyOf: [settleAnswerSchema, standardSettleAnswerSchema] } },
      400: { description: 'the requirements are not valid terms, or the payment identifier is malformed' },
      ...FACILITATOR_AUTH_ERRORS,
      409: { description: 'the payment identifier was used for another payment, or its settlement is still in progress' },
      503: { description: 'the chain did not answer or confirm in time; send the same request again' },
    },
    async handler({ body, res }) {
      if (isExactExchange(body) && ctx.exact) return { body: await ctx.exact.settle(body.paymentPayload, body.paymentRequirements, { gateway: callerGateway(res) }) };
      if (isStandardExchange(body)) {
        requireOwnGateway(res, standardRequirementOf(body, programId, graceCap).gateway);
        return { body: await settleStandard(deps, ctx.dbRead, callerGateway(res), body, programId, graceCap) };
      }
      const r = requirementFromWire(body.paymentRequirements, programId, graceCap);
      requireOwnGateway(res, r.gateway);
      return { body: await settlePayment(deps, callerGateway(res), body.paymentPayload, r) };
    },
  });

}

/** /usage: a bearer request admitted and metered for a merchant in any language. */
function registerUsageRoute(api: Api, { deps, auth, programId, graceCap }: Facilitator): void {
  api.route<Record<string, never>, Record<string, never>, UsageBody>({
    method: 'post',
    path: '/v1/x402/usage',
    summary: 'x402 facilitator: admit one request against a bearer JWT, metering its cost',
    description: 'For any language\'s merchant: the JWT must be ours, for one of the requirements, its policy still Active with their terms. '
      + 'x402://payg: `amount` (default the requirement\'s price) is counted against the policy\'s per-request and per-period caps, shared by every node. '
      + 'x402://upto: `amount` is the actual charge (0 to the authorized maximum); with `transaction` (base64 of the merchant\'s execute_payment of that amount, '
      + 'signed as the policy\'s recipient or the gateway\'s signer) it is sent and confirmed, once: a second settlement is refused. '
      + 'x402://prepaid: `amount` (default the requirement\'s pricePerRequest) is drawn from the credit the payer paid up front (a OneTime policy), '
      + 'recorded in Postgres and admitted atomically across nodes; once the credit cannot cover it the request is refused and the payer pays a new credit. '
      + 'Refused: 200 `{admitted: false, reason}`.',
    tags: ['x402'],
    security: FACILITATOR_SECURITY,
    before: [auth],
    body: usageBodySchema,
    responses: {
      200: { description: 'admitted (with what was metered) or refused (with the reason)', schema: usageAnswerSchema },
      400: { description: 'the requirements are not valid terms' },
      ...FACILITATOR_AUTH_ERRORS,
      503: { description: 'the chain or Redis did not answer' },
    },
    async handler({ body, res }) {
      const list = Array.isArray(body.paymentRequirements) ? body.paymentRequirements : [body.paymentRequirements];
      const rs = list.map((w) => requirementFromWire(w, programId, graceCap));
      for (const r of rs) requireOwnGateway(res, r.gateway);
      const amount = body.amount === undefined ? undefined : BigInt(body.amount);
      const answer = await reportUsage(deps, body.jwt, rs, amount, body.transaction);
      // a metered chunk is charged, a prepaid draw kept, once the merchant has its admission (response-end.ts)
      if (answer.admitted && (answer.metered?.requestId ?? answer.prepaid?.requestId) !== undefined) {
        const grant = answer;
        onResponseEnd(res, (served) => void deps.engine.answered(grant, served));
      }
      return { body: answer };
    },
  });

}

/** Whether a NUL is in any string or key of `value`; a loop, not recursion, so no depth can overflow the stack. */
function holdsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') { if (v.includes('\u0000')) return true; }
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) { if (k.includes('\u0000')) return true; stack.push(x); }
  }
  return false;
}

/** The token file is fetched once per verification: a short timeout, a small body. */
const PROOF_FETCH = { timeoutMs: 5000, maxBytes: 16 * 1024, userAgent: 'tributary-x402-discovery' };

/** The origins that are this service's own: no gateway registers resources there. */
function ownOrigins(http: Config['http']): string[] {
  const base = http.publicUrl ?? `http://localhost:${http.port}`;
  try {
    return [new URL(base).origin];
  } catch {
    return [];
  }
}

/** /resources and discovery: the paid resources merchants register, prove and list. */
function registerResourceRoutes(api: Api, { ctx, auth, programId, graceCap }: Facilitator): void {
  const urls: ResourceUrlPolicy = { allowHttpLoopback: ctx.config.x402.discoveryAllowHttpLoopback, ownOrigins: ownOrigins(ctx.config.http) };
  // each check is an outbound request: counted per gateway, like the webhook test tool
  const verifyLimit = createRateLimit(ctx.redis, {
    keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, 'x402-verify'), points: ctx.config.rateLimit.x402VerifyPerMinute, durationSeconds: 60, logger: ctx.logger,
  });
  api.route<Record<string, never>, Record<string, never>, ResourceInput & { accepts: Wire[] }>({
    method: 'put',
    path: '/v1/x402/resources',
    summary: 'Register a paid resource: its requirements and, when discoverable, its listing',
    description: 'Answers the `accepts` entries (with their ids) to serve in the resource\'s 402 answers. Registering the same URL again updates it. '
      + 'The URL is normalized (scheme and host lower-cased, punycode, default port and empty query dropped) and must be https, without credentials or fragment. '
      + `Discovery lists it only once the gateway proved control of its origin: until then the answer says \`verified: false\` with \`proof\`, the token to publish at <origin>${TOKEN_FILE} `
      + 'before POST /v1/x402/resources/verify. Another gateway\'s unproven registration of the URL never blocks it; a URL listed by another gateway that proved the origin too: 409.',
    tags: ['x402'],
    security: FACILITATOR_SECURITY,
    before: [auth],
    body: resourceBodySchema,
    responses: {
      200: { description: 'the resource as discovery lists it, whether it is listed, and what to publish if the origin is not proven', schema: registeredResourceSchema },
      400: { description: 'invalid URL (not https, credentials, fragment, this service\'s own origin) or requirements' },
      ...FACILITATOR_AUTH_ERRORS,
      409: { description: 'the URL is listed by another gateway that proved control of its origin' },
    },
    async handler({ body, res }) {
      // PostgreSQL text and jsonb cannot hold NUL: refused here rather than failing the insert
      if (holdsNul(body)) throw invalid('the resource, description, input and output must not contain NUL characters');
      const url = normalizeResourceUrl(body.resource, urls);
      const rs = body.accepts.map((w) => requirementFromWire({ ...w, resource: url.resource }, programId, graceCap));
      for (const r of rs) requireOwnGateway(res, r.gateway);
      const accepts = rs.map((r) => acceptedRequirement(r, url.resource));
      const input: ResourceInput = {
        resource: url.resource, origin: url.origin, type: body.type, discoverable: body.discoverable,
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.input !== undefined ? { input: body.input } : {}), ...(body.output !== undefined ? { output: body.output } : {}),
      };
      return { body: await registerResource(ctx.db, callerGateway(res), input, accepts, new Date(ctx.clock.now())) };
    },
  });

  api.route<Record<string, never>, Record<string, never>, { origin: string }>({
    method: 'post',
    path: '/v1/x402/resources/verify',
    summary: 'Prove control of an origin: the service fetches its token file and lists the gateway\'s resources there',
    description: `Fetches <origin>${TOKEN_FILE} (behind the SSRF guard, no redirects, ${PROOF_FETCH.timeoutMs} ms, at most ${PROOF_FETCH.maxBytes} bytes) `
      + 'and looks for the token PUT /v1/x402/resources issued this gateway for the origin, on a line of its own. Found: the origin is verified for the gateway '
      + 'and its resources there are listed (a URL another proven gateway lists keeps that listing). Not found: 400 whose message names the reason in parentheses '
      + '(refused_target, unreachable, redirect, status, too_large, token_missing), and nothing changes. '
      + 'Rate limit: RATE_LIMIT_X402_VERIFY_PER_MINUTE checks per minute per gateway (default 30), then 429 with Retry-After.',
    tags: ['x402'],
    security: FACILITATOR_SECURITY,
    before: [auth],
    body: originVerifyBodySchema,
    responses: {
      200: { description: 'the origin is verified for this gateway', schema: originVerifiedSchema },
      400: { description: 'invalid origin, or the token file does not prove control (the message says why)' },
      ...FACILITATOR_AUTH_ERRORS,
      404: { description: 'no token was issued to this gateway for the origin: register a resource on it first' },
      429: { description: 'the gateway asked for RATE_LIMIT_X402_VERIFY_PER_MINUTE checks in the last minute' },
    },
    async handler({ body, res }) {
      const origin = normalizeOrigin(body.origin, urls);
      await verifyLimit.enforce(callerGateway(res), res);
      const fetcher = createOriginFetcher({ ...PROOF_FETCH, allowPrivateTargets: ctx.config.webhooks.allowPrivateTargets });
      try {
        return { body: await verifyOrigin(ctx.db, fetcher, callerGateway(res), origin, new Date(ctx.clock.now())) };
      } finally {
        await fetcher.close();
      }
    },
  });

  api.route<{ type?: string; limit: number; offset: number }>({
    method: 'get',
    path: '/v1/x402/discovery/resources',
    summary: 'x402 discovery: the paid resources merchants registered as discoverable, on origins their gateways proved control of',
    tags: ['x402'],
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { type: { type: 'string', enum: ['http'] }, limit: limitSchema(20, 100), offset: offsetSchema },
    },
    responses: { 200: { description: 'x402 v2 discovery list, oldest registration first', schema: discoveryListSchema }, 400: { description: 'invalid type, limit or offset' } },
    async handler({ query }) {
      const page = await discoverResources(ctx.dbRead, { ...(query.type !== undefined ? { type: query.type } : {}), limit: query.limit, offset: query.offset });
      return { body: { x402Version: X402_VERSION, items: page.items, pagination: { limit: query.limit, offset: query.offset, total: page.total } } };
    },
  });
}
