/**
 * POST /v1/gateway/{gateway}/auth/challenge and /auth/verify: gateway sign-in; /auth/revoke:
 * every gateway JWT issued so far refused (session-floors.ts).
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key, type JsonSchema } from '../../src/kernel/http/schema.js';
import { gatewayChallengeRateLimit } from '../../infra/http/rate-limit.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import { createNonceStore } from './nonces.js';
import { MAX_CHALLENGE_LENGTH, serviceName } from '../../src/kernel/auth/signed-messages.js';
import { createChallenge, verifyChallenge, type SignInDeps } from './sign-in.js';
import { requireGatewayToken, type CurrentGatewayKeys } from '../../src/kernel/auth/gateway-token.js';
import type { Db } from '../../infra/postgres/database.js';
import { revokeSessions } from './session-floors.js';

const gatewayParams: JsonSchema = {
  type: 'object',
  required: ['gateway'],
  properties: { gateway: { ...base58Key, description: 'gateway account address (base58)' } },
};

export const challengeSchema: JsonSchema = {
  type: 'object',
  required: ['nonce', 'gateway', 'expiresAt'],
  properties: {
    nonce: { type: 'string', description: 'the text to sign: ed25519 over its UTF-8 bytes. Single use. `tributary-gateway-sign-in|<service>|<gateway>|<random>`: check the purpose, the service and the gateway before signing' },
    gateway: { type: 'string' },
    expiresAt: { type: 'integer', description: 'Unix epoch milliseconds (as the envelopes\' timestamp) after which the nonce is refused' },
  },
};

export const verifyBodySchema: JsonSchema = {
  type: 'object',
  required: ['signer', 'signature'],
  additionalProperties: false,
  properties: {
    nonce: { type: 'string', minLength: 1, maxLength: MAX_CHALLENGE_LENGTH, description: 'the nonce that was signed (from the challenge). Recommended: without it only the gateway\'s newest outstanding nonce is tried' },
    signer: { ...base58Key, description: 'base58 public key of the gateway authority or of its signer' },
    signature: {
      type: 'array', minItems: 64, maxItems: 64,
      items: { type: 'integer', minimum: 0, maximum: 255 },
      description: '64-byte ed25519 signature of the nonce\'s UTF-8 bytes, as an array of integers',
    },
  },
};

export const gatewayTokenSchema: JsonSchema = {
  type: 'object',
  required: ['token', 'expiresIn'],
  properties: {
    token: { type: 'string', description: 'gateway JWT (ES256, verifiable through /v1/jwks): sub = the gateway, role = "gateway", signer' },
    expiresIn: { type: 'integer', description: 'lifetime of the token in seconds (OAuth 2.0 expires_in)' },
  },
};

export interface GatewayAuthRouteDeps {
  redis: Redis;
  logger: Logger;
  clock: Clock;
  keyRing: SignInDeps['ring'];
  config: Pick<Config, 'keys' | 'redis' | 'rateLimit' | 'http'>;
  db: Db;
  /** the gateway's keys at use, with its session floor (the node's cached lookup) */
  gatewayKeys: CurrentGatewayKeys;
}

const revokedSchema: JsonSchema = {
  type: 'object',
  required: ['gateway', 'revokedBefore', 'message'],
  properties: {
    gateway: { type: 'string' },
    revokedBefore: { type: 'integer', description: 'Unix seconds: every gateway JWT of the gateway issued before is refused (on every API node within GATEWAY_KEYS_CACHE_MS)' },
    message: { type: 'string' },
  },
};

export function registerGatewayAuthRoutes(api: Api, ctx: GatewayAuthRouteDeps, lookup: GatewayLookup): void {
  const service = serviceName(ctx.config.http.publicUrl, ctx.config.keys.audience);
  const deps: SignInDeps = {
    lookup,
    service,
    nonces: createNonceStore(ctx.redis, ctx.config.redis.prefix, ctx.config.keys.nonceTtlSeconds, service),
    ring: ctx.keyRing,
    now: () => ctx.clock.now(),
    tokenTtlSeconds: ctx.config.keys.gatewayTokenTtlSeconds,
  };
  api.route<Record<string, never>, { gateway: string }>({
    method: 'post',
    path: '/v1/gateway/:gateway/auth/challenge',
    summary: 'Gateway sign-in, step 1: a nonce to sign',
    description: `The nonce lives GATEWAY_NONCE_TTL_SECONDS (${ctx.config.keys.nonceTtlSeconds} s here) and is accepted once, on any node. `
      + `Rate limit: ${ctx.config.rateLimit.gatewayChallengePerMinute} requests per minute per client IP and gateway, on top of the standard limit.`,
    tags: ['gateway'],
    params: gatewayParams,
    before: [gatewayChallengeRateLimit(ctx)],
    responses: {
      200: { description: 'challenge', schema: challengeSchema },
      400: { description: 'malformed gateway address' },
      404: { description: 'unknown gateway' },
      429: { description: 'rate limited (Retry-After)', headers: { 'Retry-After': { type: 'integer' } } },
    },
    async handler({ params }) {
      return { body: await createChallenge(deps, params.gateway) };
    },
  });
  api.route<Record<string, never>, { gateway: string }, { signer: string; signature: number[]; nonce?: string }>({
    method: 'post',
    path: '/v1/gateway/:gateway/auth/verify',
    summary: 'Gateway sign-in, step 2: the signed nonce for a gateway JWT',
    tags: ['gateway'],
    params: gatewayParams,
    body: verifyBodySchema,
    responses: {
      200: { description: 'gateway JWT', schema: gatewayTokenSchema },
      400: { description: 'malformed gateway, signer or signature' },
      401: { description: 'signature matches no outstanding nonce: bad, reused or expired; or the nonce is not a gateway sign-in challenge of this service for this gateway' },
      403: { description: 'signer is neither the gateway authority nor its signer, or the gateway is inactive' },
      404: { description: 'unknown gateway' },
    },
    async handler({ params, body }) {
      return { body: await verifyChallenge(deps, params.gateway, body) };
    },
  });
  api.route<Record<string, never>, { gateway: string }>({
    method: 'post',
    path: '/v1/gateway/:gateway/auth/revoke',
    summary: 'Ends every gateway session: each gateway JWT issued so far is refused',
    description: 'For a token that may have leaked (a merchant\'s browser): every gateway JWT of this gateway issued before the next second is refused, '
      + `on every API node within GATEWAY_KEYS_CACHE_MS (${ctx.config.keys.gatewayKeysCacheMs} ms here), this one included; sign in again for a new one. `
      + 'API keys are not revoked by it: list them (each names the wallet that created it) and revoke those that may have been minted with a leaked token.',
    tags: ['gateway'],
    params: gatewayParams,
    before: [requireGatewayToken(ctx.keyRing, { adminKey: ctx.config.keys.adminApiKey, keys: ctx.gatewayKeys })],
    responses: {
      200: { description: 'sessions revoked', schema: revokedSchema },
      400: { description: 'malformed gateway address' },
      401: { description: 'no valid gateway JWT (or admin key)' },
      403: { description: 'a JWT of another gateway' },
    },
    async handler({ params }) {
      const revokedBefore = await revokeSessions(ctx.db, params.gateway, ctx.clock.now());
      return { body: { gateway: params.gateway, revokedBefore, message: 'every gateway JWT issued before revokedBefore is refused; sign in again for a new one' } };
    },
  });
}
