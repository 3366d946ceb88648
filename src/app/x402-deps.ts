/**
 * The x402 middleware's collaborators inside the service: the configured chain, this
 * node's Redis and key ring (the JWTs are signed with the service's keys and published in
 * /v1/jwks), the injected clock, and the x402 settings. Built once per API node and shared
 * by the demo resource and the facilitator.
 */
import type { AppContext } from './context.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import type { X402Deps } from '../../commands/x402/engine.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { createCreditLedger } from '../../commands/x402/prepaid/ledger.js';
import { postgresSignInNonces } from '../../commands/x402/plugins/siwx-nonces.js';
import { postgresSpentProofs } from '../../commands/x402/spent-proofs.js';

export function x402DepsOf(ctx: AppContext, rpc: RpcClient, keyRing: KeyRing): X402Deps {
  const { solana, x402, redis, http } = ctx.config;
  return {
    rpc,
    programId: solana.programId,
    // payments settle at confirmed at least, whatever reads use (a processed block can be dropped by a fork)
    commitment: settlementCommitment(solana.commitment),
    redis: ctx.redis,
    redisPrefix: redis.prefix,
    signer: keyRing,
    audience: ctx.config.keys.audience,
    clock: ctx.clock,
    logger: ctx.logger,
    jwtTtlSeconds: x402.jwtTtlSeconds,
    cacheMs: x402.cacheMs,
    confirmTimeoutMs: x402.confirmTimeoutMs,
    idempotencyTtlSeconds: x402.idempotencyTtlSeconds,
    subscriptionGraceSeconds: ctx.config.access.subscriptionGraceSeconds,
    usage: createUsageLedger(ctx.db, { reservationSeconds: x402.paygReservationSeconds, ahead: x402.meterAhead, logger: ctx.logger }),
    credits: createCreditLedger(ctx.db, {
      reservationSeconds: x402.paygReservationSeconds, ahead: x402.meterAhead,
      onError: (err) => ctx.logger.warn({ err: (err as Error).message }, 'prepaid rows recorded ahead: a block failed or was not all given back (a row left is deleted by the settler at its bound, never drawn)'),
    }),
    signInNonces: postgresSignInNonces(ctx.db),
    spentProofs: postgresSpentProofs(ctx.db),
    ...(http.publicUrl ? { resourceBase: http.publicUrl.replace(/\/$/, '') } : {}),
  };
}
