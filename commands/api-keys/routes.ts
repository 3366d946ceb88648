/**
 * /v1/gateway/{gateway}/api-keys: a gateway's keys for calling the x402 facilitator from
 * servers that cannot sign in (a Python merchant, an edge worker). Managed with the
 * gateway's JWT (or the admin key); the key itself is shown once, at creation.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Api } from '../../infra/http/routes.js';
import { requireGatewayToken, type RequestAuth, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import { notFound } from '../../src/kernel/http/errors.js';
import { base58Key, type JsonSchema } from '../../src/kernel/http/schema.js';
import { createApiKey, listApiKeys, revokeApiKey } from './store.js';
import type { Redis } from 'ioredis';
import type { Logger } from '../../infra/log/logger.js';
import { credentialRevokedChannel } from '../../src/kernel/names/index.js';

const gatewayParams: JsonSchema = {
  type: 'object', required: ['gateway'], properties: { gateway: { ...base58Key, description: 'gateway account address' } },
};
const keyInfo: JsonSchema = {
  type: 'object',
  required: ['id', 'gateway', 'label', 'createdAt', 'revokedAt', 'createdBy'],
  properties: {
    id: { type: 'string' }, gateway: base58Key, label: { type: 'string', nullable: true },
    createdAt: { type: 'string', format: 'date-time' }, revokedAt: { type: 'string', format: 'date-time', nullable: true },
    createdBy: {
      ...base58Key, nullable: true,
      description: 'the wallet whose gateway JWT created the key: the key works only while that wallet is the gateway\'s authority or signer (null: made with the admin key)',
    },
  },
};
const AUTH = {
  401: { description: 'no credential, or an invalid or expired one' },
  403: { description: 'a token of another gateway, or not a gateway token' },
};
const SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { AdminApiKey: [] }];

export interface ApiKeyRouteDeps {
  db: Db; dbRead: Db; clock: Clock; keyRing: TokenVerifier; gatewayKeys: GatewayLookup; config: Pick<Config, 'keys' | 'redis'>;
  /** announces revocations to every node (their live feeds opened with the key end) */
  redis: Pick<Redis, 'publish'>;
  logger: Logger;
}

export function registerApiKeyRoutes(api: Api, ctx: ApiKeyRouteDeps): void {
  const auth = requireGatewayToken(ctx.keyRing, { adminKey: ctx.config.keys.adminApiKey, keys: ctx.gatewayKeys });
  const now = () => new Date(ctx.clock.now());

  api.route<Record<string, never>, { gateway: string }, { label?: string }>({
    method: 'post',
    path: '/v1/gateway/:gateway/api-keys',
    summary: 'Create an API key for the x402 facilitator',
    description: 'The key (`tak_<id>_<secret>`) is in this answer only: it is stored hashed. Send it as `x-api-key` to /v1/x402/*. '
      + 'A key made with a gateway JWT works only while the wallet that signed in is still the gateway\'s authority or signer (sign in as the authority '
      + 'for keys that outlive a signer change, such as delegating execution to the scheduler); a key made with the admin key, while the gateway is active.',
    tags: ['x402'],
    security: SECURITY,
    before: [auth],
    params: gatewayParams,
    body: { type: 'object', additionalProperties: false, properties: { label: { type: 'string', maxLength: 200, pattern: '^[^\\u0000]*$', description: 'no NUL characters' } } },
    responses: {
      201: { description: 'created; `key` is shown this once', schema: { ...keyInfo, required: [...(keyInfo['required'] as string[]), 'key'], properties: { ...(keyInfo['properties'] as object), key: { type: 'string' } } } },
      400: { description: 'invalid gateway or label' },
      ...AUTH,
    },
    async handler({ params, body, res }) {
      // a key minted with a gateway JWT belongs to the wallet that signed in: it works while that wallet is the gateway's
      const auth = res.locals['auth'] as RequestAuth;
      const createdBy = auth.kind === 'gateway' ? auth.claims.signer : null;
      return { status: 201, body: await createApiKey(ctx.db, params.gateway, body.label ?? null, now(), createdBy) };
    },
  });

  api.route<Record<string, never>, { gateway: string }>({
    method: 'get',
    path: '/v1/gateway/:gateway/api-keys',
    summary: "The gateway's API keys (without their secrets)",
    tags: ['x402'],
    security: SECURITY,
    before: [auth],
    params: gatewayParams,
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'newest first', schema: { type: 'array', items: keyInfo } }, 400: { description: 'invalid gateway' }, ...AUTH },
    async handler({ params }) {
      return { body: await listApiKeys(ctx.dbRead, params.gateway) };
    },
  });

  api.route<Record<string, never>, { gateway: string; id: string }>({
    method: 'delete',
    path: '/v1/gateway/:gateway/api-keys/:id',
    summary: 'Revoke an API key',
    description: 'A revoked key is refused (401) from then on, by every node; live feeds (Socket.IO /merchant) opened with it are ended with an error `credential_revoked`.',
    tags: ['x402'],
    security: SECURITY,
    before: [auth],
    params: {
      type: 'object', required: ['gateway', 'id'],
      properties: { gateway: (gatewayParams['properties'] as { gateway: JsonSchema }).gateway, id: { type: 'string', pattern: '^[0-9a-f]{16}$' } },
    },
    responses: { 200: { description: 'revoked', schema: keyInfo }, 400: { description: 'invalid gateway or id' }, ...AUTH, 404: { description: 'the gateway has no such key' } },
    async handler({ params }) {
      const revoked = await revokeApiKey(ctx.db, params.gateway, params.id, now());
      if (!revoked) throw notFound(`gateway ${params.gateway} has no API key ${params.id}`);
      // every node ends the feeds opened with the key; a node that misses this (its subscriber
      // away) finds the key revoked at its next check of its feeds (WS_AUTH_RECHECK_SECONDS)
      await ctx.redis.publish(credentialRevokedChannel(ctx.config.redis.prefix), JSON.stringify({ apiKey: params.id, gateway: params.gateway }))
        .catch((err: Error) => ctx.logger.warn({ err: err.message }, 'revocation not announced; live feeds end at their next check'));
      return { body: revoked };
    },
  });
}
