/**
 * /v1/webhooks: the seven routes of SPEC.md and GET /v1/webhooks/{id}/deliveries.
 *
 * Credentials: `Authorization: Bearer <gateway JWT>` (gateway sign-in) acting for the
 * webhook's gateway_pubkey (the gateway's authority; the account address is a 400), or
 * `x-admin-key`.
 * Listing every webhook needs the admin key. No credential: 401; another gateway's: 403.
 * Answers are bare objects and arrays (SPEC: "Webhook", "array of Webhook"); errors use
 * the error envelope. Both DELETEs answer 200 `{deleted: n}`: a count tells the caller
 * what happened (the gateway variant may remove zero or many).
 */
import type { RequestHandler, Response } from 'express';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Db } from '../../infra/postgres/database.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import type { Api } from '../../infra/http/routes.js';
import type { Redis } from 'ioredis';
import type { Logger } from '../../infra/log/logger.js';
import { createRateLimit } from '../../infra/http/redis-rate-limit.js';
import { rateLimitPrefix } from '../../src/kernel/names/index.js';
import { requireAdminKey } from '../../src/kernel/auth/admin-key.js';
import { requireGatewayToken, type RequestAuth, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { API_VERSION } from '../../src/kernel/http/version.js';
import { registerWebhookToolRoutes } from './tool-routes.js';
import {
  attemptListSchema, createBodySchema, createdWebhookSchema, deletedSchema, gatewayParams, idParams, listQuery,
  updateBodySchema, webhookListSchema, webhookSchema,
} from './schemas.js';
import {
  createWebhook, getWebhook, listAll, listDeliveries, listOfGateway, removeGatewayWebhooks, removeWebhook,
  toWebhook, updateWebhook, type CreateInput, type UpdateInput, type WebhookDeps,
} from './service.js';

type ListQuery = { active_only: boolean; limit: number; offset: number };
type PageQuery = { limit: number; offset: number };
type IdParams = { id: number };
type GatewayParams = { gatewayPubkey: string };

const authOf = (res: Response): RequestAuth => res.locals['auth'] as RequestAuth;

const SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { AdminApiKey: [] }];
const AUTH_ERRORS = {
  401: { description: 'no credential, or an invalid or expired one' },
  403: { description: 'the token was issued for another gateway' },
};

/** What the webhook service is built from (the API node meets it). */
export interface WebhookServiceDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'solana' | 'keys' | 'webhooks'>;
  /** who may act for a gateway, asked at registration */
  gatewayLookup: GatewayLookup;
}

/** The routes' collaborators: the service's, and what checks gateway JWTs. */
export interface WebhookRouteDeps extends WebhookServiceDeps {
  config: Pick<Config, 'solana' | 'keys' | 'webhooks' | 'http' | 'redis' | 'rateLimit'>;
  /** the test tool's rate limit lives in Redis, shared by every node */
  redis: Redis;
  logger: Logger;
  keyRing: TokenVerifier;
  /** the gateway's keys now, cached per node */
  gatewayKeys: GatewayLookup;
}

export function webhookDeps(ctx: WebhookServiceDeps): WebhookDeps {
  return {
    db: ctx.db,
    pda: createPdaDeriver(ctx.config.solana.programId),
    now: () => ctx.clock.now(),
    encryptionKey: ctx.config.keys.encryptionKey,
    allowPrivateTargets: ctx.config.webhooks.allowPrivateTargets,
    maxPerGateway: ctx.config.webhooks.maxPerGateway,
    gatewayOf: ctx.gatewayLookup,
  };
}

export function registerWebhookRoutes(api: Api, ctx: WebhookRouteDeps): void {
  const deps = webhookDeps(ctx);
  const maxLimit = ctx.config.http.maxLimit;
  // Which gateway a request acts for is known only after validation (body) or a read (id):
  // the middleware authenticates, the service authorizes.
  const gatewayOrAdmin: RequestHandler = requireGatewayToken(ctx.keyRing, { gatewayOf: () => undefined, adminKey: ctx.config.keys.adminApiKey, keys: ctx.gatewayKeys });
  // /v1/webhooks/event-types is a path of its own, not a webhook id: registered first, and
  // the :id routes pass other methods on it to the 404
  const byId: RequestHandler[] = [(req, _res, next) => { next(req.params['id'] === 'event-types' ? 'route' : undefined); }, gatewayOrAdmin];
  registerWebhookToolRoutes(api, {
    ...deps,
    secretGraceSeconds: ctx.config.webhooks.secretGraceSeconds,
    timeoutMs: ctx.config.webhooks.timeoutMs,
    userAgent: `tributary-webhooks/${API_VERSION}`,
    testLimit: createRateLimit(ctx.redis, {
      keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, 'webhook-test'), points: ctx.config.rateLimit.webhookTestPerMinute, durationSeconds: 60, logger: ctx.logger,
    }),
  }, gatewayOrAdmin);

  const r: RouteCtx = { deps, maxLimit, gatewayOrAdmin, byId, adminKey: ctx.config.keys.adminApiKey };
  registerGatewayWebhookRoutes(api, r);
  registerWebhookByIdRoutes(api, r);
}

/** What the route groups share: the service, the page bound, and the credentials' middleware. */
interface RouteCtx {
  deps: WebhookDeps;
  maxLimit: number;
  /** a gateway JWT or the admin key */
  gatewayOrAdmin: RequestHandler;
  /** the same, for /v1/webhooks/:id paths (passes /v1/webhooks/event-types on) */
  byId: RequestHandler[];
  adminKey: Config['keys']['adminApiKey'];
}

/** Registration, the admin's list, and a gateway's webhooks listed or deleted. */
function registerGatewayWebhookRoutes(api: Api, { deps, maxLimit, gatewayOrAdmin, adminKey }: RouteCtx): void {
  api.route<Record<string, never>, Record<string, never>, CreateInput>({
    method: 'post',
    path: '/v1/webhooks',
    summary: 'Register a webhook for a gateway',
    description: 'Returns the webhook with its Standard Webhooks signing secret, shown this once. The target must resolve to a public address. '
      + 'gateway_pubkey is the gateway\'s authority public key (SPEC); the gateway account address is refused with 400, naming the authority when known.',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    body: createBodySchema,
    responses: {
      201: { description: 'created', schema: createdWebhookSchema },
      400: { description: 'gateway_pubkey is not a 32-byte base58 key or is the gateway account address (the authority key is expected), or endpoint_url is not an http(s) URL or targets a private address' },
      ...AUTH_ERRORS,
      409: { description: 'the gateway already has a webhook for this endpoint_url, or already has WEBHOOK_MAX_PER_GATEWAY webhooks' },
    },
    async handler({ body, res }) {
      const created = await createWebhook(deps, authOf(res), body);
      return { status: 201, body: created, headers: { Location: `/v1/webhooks/${created.id}` } };
    },
  });

  api.route<ListQuery>({
    method: 'get',
    path: '/v1/webhooks',
    summary: 'List every webhook (admin)',
    description: 'Requires x-admin-key. Ordered by id.',
    tags: ['webhooks'],
    security: [{ AdminApiKey: [] }],
    before: [requireAdminKey(adminKey)],
    query: listQuery(maxLimit),
    responses: {
      200: { description: 'webhooks', schema: webhookListSchema },
      401: { description: 'x-admin-key missing or wrong' },
      403: { description: 'admin API disabled: ADMIN_API_KEY is not configured' },
    },
    async handler({ query }) {
      return { body: await listAll(deps, query.active_only, query) };
    },
  });

  api.route<ListQuery, GatewayParams>({
    method: 'get',
    path: '/v1/webhooks/gateway/:gatewayPubkey',
    summary: 'List the webhooks of a gateway',
    description: 'Webhooks registered under this gateway authority key, ordered by id. The gateway account address is refused with 400.',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    params: gatewayParams,
    query: listQuery(maxLimit),
    responses: { 200: { description: 'webhooks', schema: webhookListSchema }, 400: { description: 'malformed gatewayPubkey, or the gateway account address (the authority key is expected)' }, ...AUTH_ERRORS },
    async handler({ params, query, res }) {
      return { body: await listOfGateway(deps, authOf(res), params.gatewayPubkey, query.active_only, query) };
    },
  });

  api.route<Record<string, never>, GatewayParams>({
    method: 'delete',
    path: '/v1/webhooks/gateway/:gatewayPubkey',
    summary: 'Delete every webhook of a gateway',
    description: 'Pending deliveries of these webhooks are dropped. Answers the number removed (0 when there were none).',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    params: gatewayParams,
    responses: { 200: { description: 'deleted', schema: deletedSchema }, 400: { description: 'malformed gatewayPubkey, or the gateway account address (the authority key is expected)' }, ...AUTH_ERRORS },
    async handler({ params, res }) {
      return { body: await removeGatewayWebhooks(deps, authOf(res), params.gatewayPubkey) };
    },
  });
}

/** One webhook by id: read, changed, deleted, and its delivery attempts. */
function registerWebhookByIdRoutes(api: Api, { deps, maxLimit, byId }: RouteCtx): void {
  api.route<Record<string, never>, IdParams>({
    method: 'get',
    path: '/v1/webhooks/:id',
    summary: 'A webhook',
    tags: ['webhooks'],
    security: SECURITY,
    before: byId,
    params: idParams,
    responses: { 200: { description: 'webhook', schema: webhookSchema }, 400: { description: 'id is not a positive integer' }, ...AUTH_ERRORS, 404: { description: 'unknown webhook' } },
    async handler({ params, res }) {
      return { body: toWebhook(await getWebhook(deps, authOf(res), params.id)) };
    },
  });

  api.route<Record<string, never>, IdParams, UpdateInput>({
    method: 'put',
    path: '/v1/webhooks/:id',
    summary: 'Activate or deactivate a webhook, and change its settings',
    description: 'active=false stops deliveries (pending ones wait); active=true resumes them and clears disabled_reason. event_types, ordered and rate_limit_per_second change when given. updated_at changes.',
    tags: ['webhooks'],
    security: SECURITY,
    before: byId,
    params: idParams,
    body: updateBodySchema,
    responses: { 200: { description: 'updated', schema: webhookSchema }, 400: { description: 'bad id or body' }, ...AUTH_ERRORS, 404: { description: 'unknown webhook' } },
    async handler({ params, body, res }) {
      return { body: await updateWebhook(deps, authOf(res), params.id, body) };
    },
  });

  api.route<Record<string, never>, IdParams>({
    method: 'delete',
    path: '/v1/webhooks/:id',
    summary: 'Delete a webhook',
    description: 'Its pending deliveries are dropped. Answers {deleted: 1}.',
    tags: ['webhooks'],
    security: SECURITY,
    before: byId,
    params: idParams,
    responses: { 200: { description: 'deleted', schema: deletedSchema }, 400: { description: 'id is not a positive integer' }, ...AUTH_ERRORS, 404: { description: 'unknown webhook' } },
    async handler({ params, res }) {
      return { body: await removeWebhook(deps, authOf(res), params.id) };
    },
  });

  api.route<PageQuery, IdParams>({
    method: 'get',
    path: '/v1/webhooks/:id/deliveries',
    summary: 'Delivery attempts of a webhook, newest first',
    description: 'Every HTTP attempt: status code, latency, error, and the state of its delivery.',
    tags: ['webhooks'],
    security: SECURITY,
    before: byId,
    params: idParams,
    query: listQuery(maxLimit, false),
    responses: { 200: { description: 'attempts', schema: attemptListSchema }, 400: { description: 'bad id or pagination' }, ...AUTH_ERRORS, 404: { description: 'unknown webhook' } },
    async handler({ params, query, res }) {
      return { body: await listDeliveries(deps, authOf(res), params.id, query) };
    },
  });
}
