/**
 * GET /v1/jwks and its discovery alias /.well-known/jwks.json: the bare key set (not the
 * envelope) that verifies every JWT the service issues: the active key and every key
 * still in its grace period. Publicly cacheable for an hour; a verifier that meets an
 * unknown kid refetches (jose's remote key set does), so a rotation is not held back.
 */
import type { Api } from '../../infra/http/routes.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';

export const jwkSchema: JsonSchema = {
  type: 'object',
  required: ['kid', 'kty', 'alg', 'use', 'crv', 'x', 'y'],
  properties: {
    kid: { type: 'string', description: 'key id: UTC creation day and 4 hex characters, e.g. 2026-11-21-ab12' },
    kty: { type: 'string', enum: ['EC'] },
    alg: { type: 'string', enum: ['ES256'] },
    use: { type: 'string', enum: ['sig'] },
    crv: { type: 'string', enum: ['P-256'] },
    x: { type: 'string', description: 'base64url' },
    y: { type: 'string', description: 'base64url' },
  },
};

export const jwksSchema: JsonSchema = {
  type: 'object',
  required: ['keys'],
  description: 'RFC 7517 JSON Web Key Set: the active key first, then keys in their grace period',
  properties: { keys: { type: 'array', items: jwkSchema } },
};

export const JWKS_CACHE_CONTROL = 'public, max-age=3600';

export function registerJwksRoutes(api: Api, ctx: { keyRing: Pick<KeyRing, 'jwks'> }): void {
  const ring = ctx.keyRing;
  for (const path of ['/v1/jwks', '/.well-known/jwks.json']) {
    api.route({
      method: 'get',
      path,
      summary: path === '/v1/jwks' ? 'Public keys that verify issued JWTs' : 'JWKS discovery alias of /v1/jwks',
      tags: ['jwks'],
      query: { type: 'object', additionalProperties: false, properties: {} },
      responses: {
        200: { description: 'the key set (bare, no envelope)', schema: jwksSchema, headers: { 'Cache-Control': { type: 'string', example: JWKS_CACHE_CONTROL } } },
        503: { description: 'signing keys unavailable (database unreachable or keys undecryptable)' },
      },
      async handler() {
        return { body: await ring.jwks(), headers: { 'Cache-Control': JWKS_CACHE_CONTROL } };
      },
    });
  }
}
