/**
 * The middleware's dependencies inside the service: the configured chain, this node's
 * Redis and key ring (the JWTs are signed with the service's keys and published in
 * /v1/jwks), the injected clock, and the x402 settings.
 */
import type { AppContext } from '../../src/kernel/context.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { keyRingOf } from '../../infra/signing-keys/key-ring.js';
import type { X402Deps } from './engine.js';
import { createUsageLedger } from '../settlement/usage-ledger.js';

export function x402DepsFromContext(ctx: AppContext): X402Deps {
  const { solana, x402, redis, http } = ctx.config;
  return {
    rpc: createRpcClient({ url: solana.rpcUrl, timeoutMs: solana.rpcTimeoutMs }),
    programId: solana.programId,
    commitment: solana.commitment,
    redis: ctx.redis,
    redisPrefix: redis.prefix,
    signer: keyRingOf(ctx),
    clock: ctx.clock,
    logger: ctx.logger,
    jwtTtlSeconds: x402.jwtTtlSeconds,
    cacheMs: x402.cacheMs,
    confirmTimeoutMs: x402.confirmTimeoutMs,
    idempotencyTtlSeconds: x402.idempotencyTtlSeconds,
    subscriptionGraceSeconds: ctx.config.access.subscriptionGraceSeconds,
    usage: createUsageLedger(ctx.db),
    ...(http.publicUrl ? { resourceBase: http.publicUrl.replace(/\/$/, '') } : {}),
  };
}
