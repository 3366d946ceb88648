/**
 * POST /v1/tokens/challenge and /v1/tokens/issue: a short-lived JWT bound to a wallet that
 * proves it holds the wallet (a signed challenge) and a policy or a payment.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Api } from '../../infra/http/routes.js';
import { createRateLimit } from '../../infra/http/redis-rate-limit.js';
import { issueToken, type IssueDeps, type IssueRequest } from './issue.js';
import { challengeRequestSchema, issueRequestSchema, tokenBundleSchema, walletChallengeSchema } from './schema.js';
import { createWalletChallenges } from './wallet-proof.js';
import { serviceName } from '../../src/kernel/auth/signed-messages.js';
import { rateLimitPrefix } from '../../src/kernel/names/index.js';

export interface TokenRouteDeps {
  dbRead: Db;
  redis: Redis;
  logger: Logger;
  clock: Clock;
  keyRing: IssueDeps['ring'];
  config: Pick<Config, 'rateLimit' | 'keys' | 'redis' | 'access' | 'http'>;
}

export function registerTokenRoutes(api: Api, ctx: TokenRouteDeps): void {
  const perMinute = ctx.config.rateLimit.tokensIssuePerMinute;
  const { tokensRequireWalletProof: proofs, tokenChallengeTtlSeconds: ttl } = ctx.config.keys;
  const challenges = createWalletChallenges(ctx.redis, ctx.config.redis.prefix, ttl, serviceName(ctx.config.http.publicUrl, ctx.config.keys.audience));
  if (!proofs) {
    ctx.logger.warn('TOKENS_REQUIRE_WALLET_PROOF=false: POST /v1/tokens/issue issues a token for ANY wallet named in the request, without proof that the caller holds it. Merchants gating on these tokens can be impersonated.');
  }
  const deps: IssueDeps = {
    db: ctx.dbRead,
    ring: ctx.keyRing,
    audience: ctx.config.keys.audience,
    limit: createRateLimit(ctx.redis, { keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, 'tokens-issue'), points: perMinute, durationSeconds: 60, logger: ctx.logger }),
    now: () => ctx.clock.now(),
    maxTtlSeconds: ctx.config.keys.tokenMaxTtlSeconds,
    paymentMaxAgeSeconds: ctx.config.keys.paymentProofMaxAgeSeconds,
    challenges: proofs ? challenges : undefined,
    subscriptionGraceSeconds: ctx.config.access.subscriptionGraceSeconds,
  };
  api.route<Record<string, never>, Record<string, never>, { walletPublicKey: string }>({
    method: 'post',
    path: '/v1/tokens/challenge',
    summary: 'A nonce for the wallet to sign, proving it holds the wallet a token is asked for',
    description: `The nonce lives TOKEN_CHALLENGE_TTL_SECONDS (${ttl} s here), is bound to walletPublicKey and accepted once, on any node. `
      + 'Sign its UTF-8 bytes with the wallet (ed25519) and send nonce and signature to POST /v1/tokens/issue.',
    tags: ['tokens'],
    body: challengeRequestSchema,
    responses: {
      200: { description: 'challenge', schema: walletChallengeSchema },
      400: { description: 'walletPublicKey malformed, or a key no wallet can sign with (small order)' },
    },
    async handler({ body }) {
      return { body: await challenges.issue(body.walletPublicKey, ctx.clock.now()) };
    },
  });
  api.route<Record<string, never>, Record<string, never>, IssueRequest>({
    method: 'post',
    path: '/v1/tokens/issue',
    summary: 'Issue a JWT bound to a wallet with an active policy or a recent payment',
    description: `${proofs
      ? 'Requires a proof of the wallet: nonce (POST /v1/tokens/challenge) and signature, the wallet\'s ed25519 signature of the nonce\'s UTF-8 bytes. With transactionSignature the payment must be the proven wallet\'s. '
      : 'This node runs with TOKENS_REQUIRE_WALLET_PROOF=false: no proof of the wallet is asked. '}`
      + 'The token is good at one gateway only (aud = JWT_AUDIENCE:gateway:<gateway>): the one named in gateway, else the payment\'s (transactionSignature), else the one gateway of the matching policies. '
      + `Rate limits: the standard per-IP limit first, then ${perMinute} requests per minute per (proven) wallet, across all nodes (RateLimit and RateLimit-Policy headers).`,
    tags: ['tokens'],
    body: issueRequestSchema,
    responses: {
      200: { description: 'token bundle', schema: tokenBundleSchema },
      400: { description: 'invalid input: malformed field, neither walletPublicKey nor transactionSignature, or no gateway named while the matching policies are at several gateways' },
      401: { description: 'code proof_required: no nonce and signature; code unauthorized: the nonce unknown, expired, already used or issued to another wallet, or the signature not the wallet\'s' },
      403: { description: 'no active payment policy for the wallet (and filters), and no payment proof' },
      404: { description: 'transactionSignature: no PaymentRecord in the index for it (and this wallet and filters), or older than TOKEN_PAYMENT_MAX_AGE_SECONDS' },
      429: { description: 'rate limited (per IP, or per wallet); Retry-After gives the seconds to wait', headers: { 'Retry-After': { type: 'integer' } } },
      503: { description: 'the payment index or the signing keys are unavailable' },
    },
    async handler({ body, res }) {
      return { body: await issueToken(deps, body, res) };
    },
  });
}
