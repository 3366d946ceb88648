/** POST /v1/tokens/issue: a short-lived JWT bound to a wallet that proves a policy or a payment. */
import type { AppContext } from '../../src/app/context.js';
import type { Api } from '../../src/http/routes.js';
import { createRateLimit } from '../../infra/redis/rate-limit.js';
import { keyRingOf } from '../keys/key-ring.js';
import { issueToken, type IssueDeps, type IssueRequest } from './issue.js';
import { issueRequestSchema, tokenBundleSchema } from './schema.js';
import { rateLimitPrefix } from '../../src/keys/index.js';

export function registerTokenRoutes(api: Api, ctx: AppContext): void {
  const perMinute = ctx.config.rateLimit.tokensIssuePerMinute;
  const deps: IssueDeps = {
    db: ctx.dbRead,
    ring: keyRingOf(ctx),
    limit: createRateLimit(ctx.redis, { keyPrefix: rateLimitPrefix(ctx.config.redis.prefix, 'tokens-issue'), points: perMinute, durationSeconds: 60, logger: ctx.logger }),
    now: () => ctx.clock.now(),
    maxTtlSeconds: ctx.config.keys.tokenMaxTtlSeconds,
    paymentMaxAgeSeconds: ctx.config.keys.paymentProofMaxAgeSeconds,
  };
  api.route<Record<string, never>, Record<string, never>, IssueRequest>({
    method: 'post',
    path: '/v1/tokens/issue',
    summary: 'Issue a JWT bound to a wallet with an active policy or a recent payment',
    description: `Rate limit: ${perMinute} requests per minute per wallet, across all nodes (RateLimit and RateLimit-Policy headers).`,
    tags: ['tokens'],
    body: issueRequestSchema,
    rateLimit: 'own', // per wallet, in issueToken
    responses: {
      200: { description: 'token bundle', schema: tokenBundleSchema },
      400: { description: 'invalid input: malformed field, or neither walletPublicKey nor transactionSignature' },
      403: { description: 'no active payment policy for the wallet (and filters), and no payment proof' },
      404: { description: 'transactionSignature: no PaymentRecord in the index for it (and this wallet and filters), or older than TOKEN_PAYMENT_MAX_AGE_SECONDS' },
      429: { description: 'rate limited; Retry-After gives the seconds to wait', headers: { 'Retry-After': { type: 'integer' } } },
      503: { description: 'the payment index or the signing keys are unavailable' },
    },
    async handler({ body, res }) {
      return { body: await issueToken(deps, body, res) };
    },
  });
}
