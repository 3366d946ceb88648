/**
 * POST /v1/gateway/{gateway}/auth/challenge and /auth/verify: gateway sign-in.
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
}

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
}
