/**
 * The payer's own account, its write side: sign in with a wallet (POST /v1/me/auth/challenge
 * and /verify), ask for the unsigned transaction that pauses, resumes or cancels one of the
 * wallet's policies or revokes its delegation, and send it back signed (POST
 * /v1/me/transactions). The lists are queries/me.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Db } from '../../infra/postgres/database.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import type { Api } from '../../infra/http/routes.js';
import { createRateLimit } from '../../infra/http/redis-rate-limit.js';
import { clientOf } from '../../infra/http/rate-limit.js';
import { serviceName } from '../../src/kernel/auth/signed-messages.js';
import { rateLimitPrefix } from '../../src/kernel/names/index.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { payerOf, requirePayerToken } from '../../src/kernel/auth/payer-token.js';
import { issuePayerChallenge, verifyPayerChallenge, type PayerAuthDeps } from './auth.js';
import { buildPolicyAction, buildRevoke, POLICY_ACTIONS, type ActionDeps, type PolicyAction } from './actions.js';
import { relayPayerTransaction, type RelayDeps } from './transactions.js';
import {
  ME_SECURITY, payerChallengeSchema, payerTokenSchema, policyActionParams, relayBodySchema, relayResultSchema,
  revokeBodySchema, unsignedTransactionSchema, verifyBodySchema, walletBodySchema,
} from './schemas.js';

export interface PayerAccountRouteDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  clock: Clock;
  rpc: RpcClient;
  keyRing: KeyRing;
  config: Pick<Config, 'keys' | 'redis' | 'rateLimit' | 'http' | 'solana' | 'x402'>;
}

const authErrors = {
  401: { description: 'no payer token, or an invalid or expired one, or a JWT of another kind (a gateway token): sign in with POST /v1/me/auth/challenge' },
  403: { description: 'a JWT of the payer audience without the payer role or a wallet subject' },
};

export function registerPayerAccountRoutes(api: Api, ctx: PayerAccountRouteDeps): void {
  const { config } = ctx;
  const auth: PayerAuthDeps = {
    redis: ctx.redis, prefix: config.redis.prefix, ttlSeconds: config.keys.nonceTtlSeconds,
    service: serviceName(config.http.publicUrl, config.keys.audience), ring: ctx.keyRing, now: () => ctx.clock.now(),
  };
  const pdas = createPdaDeriver(config.solana.programId);
  const actions: ActionDeps = { db: ctx.db, rpc: ctx.rpc, pdas, commitment: config.solana.commitment };
  const relay: RelayDeps = { io: { rpc: ctx.rpc, commitment: config.solana.commitment }, pdas, confirmTimeoutMs: config.x402.confirmTimeoutMs };
  const payer = requirePayerToken(ctx.keyRing);
  const challengeLimit = createRateLimit(ctx.redis, {
    keyPrefix: rateLimitPrefix(config.redis.prefix, 'payer-challenge'), points: config.rateLimit.gatewayChallengePerMinute, durationSeconds: 60, logger: ctx.logger,
  }).middleware((req) => clientOf(req));

  api.route<Record<string, never>, Record<string, never>, { wallet: string }>({
    method: 'post',
    path: '/v1/me/auth/challenge',
    summary: 'Payer sign-in, step 1: a nonce for the wallet to sign',
    description: `The nonce lives GATEWAY_NONCE_TTL_SECONDS (${config.keys.nonceTtlSeconds} s here), is bound to the wallet and accepted once, on any node. `
      + `Rate limit: ${config.rateLimit.gatewayChallengePerMinute} requests per minute per client IP, on top of the standard limit.`,
    tags: ['payer'],
    body: walletBodySchema,
    before: [challengeLimit],
    responses: {
      200: { description: 'challenge', schema: payerChallengeSchema },
      400: { description: 'wallet malformed, or a key no wallet can sign with (small order)' },
      429: { description: 'rate limited (Retry-After)', headers: { 'Retry-After': { type: 'integer' } } },
    },
    async handler({ body }) {
      return { body: await issuePayerChallenge(auth, body.wallet) };
    },
  });
  api.route<Record<string, never>, Record<string, never>, { wallet: string; nonce: string; signature: number[] }>({
    method: 'post',
    path: '/v1/me/auth/verify',
    summary: 'Payer sign-in, step 2: the signed nonce for a payer JWT',
    tags: ['payer'],
    body: verifyBodySchema,
    responses: {
      200: { description: 'payer JWT', schema: payerTokenSchema },
      400: { description: 'wallet, nonce or signature malformed' },
      401: { description: 'the nonce unknown, expired, already used, issued to another wallet or for another purpose or service; or the signature not the wallet\'s' },
    },
    async handler({ body }) {
      return { body: await verifyPayerChallenge(auth, body) };
    },
  });
  api.route<Record<string, never>, { address: string; action: PolicyAction }>({
    method: 'post',
    path: '/v1/me/policies/:address/:action',
    summary: 'The unsigned transaction that pauses, resumes or cancels one of the wallet\'s payment policies',
    description: `action: ${POLICY_ACTIONS.join(', ')}. pause and resume are the program's change_payment_policy_status, cancel its delete_payment_policy `
      + '(the policy account is closed: no further charges, its rent returns). The wallet is the fee payer and the one signer; sign it and send it to POST /v1/me/transactions.',
    tags: ['payer'],
    params: policyActionParams,
    security: ME_SECURITY,
    before: [payer],
    responses: {
      200: { description: 'unsigned transaction', schema: unsignedTransactionSchema },
      400: { description: 'address malformed or action unknown' },
      ...authErrors,
      404: { description: 'no such payment policy (never created, or deleted)' },
      409: { description: 'pause of a policy not Active, or resume of one not Paused' },
      503: { description: 'the chain gave no recent blockhash' },
    },
    async handler({ params, res }) {
      return { body: await buildPolicyAction(actions, payerOf(res), params.address, params.action) };
    },
  });
  api.route<Record<string, never>, Record<string, never>, { mint?: string; tokenAccount?: string }>({
    method: 'post',
    path: '/v1/me/approvals/revoke',
    summary: 'The unsigned transaction that revokes the delegation on one of the wallet\'s token accounts',
    description: 'The SPL token program\'s Revoke, owner = the wallet: no delegate (the program\'s user payment included) can move the account\'s tokens any more, so no policy paid from it can be charged until the wallet approves again.',
    tags: ['payer'],
    body: revokeBodySchema,
    security: ME_SECURITY,
    before: [payer],
    responses: {
      200: { description: 'unsigned transaction', schema: unsignedTransactionSchema },
      400: { description: 'neither mint nor tokenAccount, or one malformed' },
      ...authErrors,
      503: { description: 'the chain gave no recent blockhash' },
    },
    async handler({ body, res }) {
      return { body: await buildRevoke(actions, payerOf(res), body) };
    },
  });
  api.route<Record<string, never>, Record<string, never>, { transaction: string }>({
    method: 'post',
    path: '/v1/me/transactions',
    summary: 'Send a transaction the wallet signed: only its own pause, resume, cancel or revoke',
    description: 'The transaction must be paid for and signed by the signed-in wallet alone and hold only the program\'s change_payment_policy_status or delete_payment_policy '
      + 'on the wallet\'s own policies, the token program\'s Revoke of the wallet\'s own accounts, and compute budget instructions. Anything else is refused and nothing is sent. '
      + `The answer waits up to X402_CONFIRM_TIMEOUT_MS (${config.x402.confirmTimeoutMs} ms here) for the commitment.`,
    tags: ['payer'],
    body: relayBodySchema,
    security: ME_SECURITY,
    before: [payer],
    responses: {
      200: { description: 'sent: confirmed, or pending when the wait ran out', schema: relayResultSchema },
      400: { description: 'not base64 or not a transaction; another instruction, another wallet\'s policy or account, another signer or fee payer, a bad signature; or an expired blockhash' },
      ...authErrors,
      409: { description: 'the program refused it (its error named): for instance the policy is not Active to pause' },
      503: { description: 'the chain could not be reached; the signed bytes may be sent again' },
    },
    async handler({ body, res }) {
      return { body: await relayPayerTransaction(relay, payerOf(res), body.transaction) };
    },
  });
}
