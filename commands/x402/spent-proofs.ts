/**
 * Where payment proofs are spent (proof.ts): a proof buys one answer. Once a JWT is issued
 * from a Payment payload, its proof is recorded per (payer, proof signature), and the same
 * proof presented again is refused for as long as it could still be accepted (twice the
 * proof window: a proof is taken while |now - signedAt| <= the window). A copy of a header
 * (a proxy's log, an MCP host's transcript) thus gets nothing; the payer, who holds the key,
 * signs a fresh proof to be answered again.
 *
 * A payment that ends without an answer (503 in doubt, a refusal) spends nothing: the same
 * header sent again resumes it.
 *
 * Two stores (spend-once.ts), as for the Sign-In-With-X nonces (plugins/siwx-nonces.ts):
 *   - Postgres (the service's: migration 1020): the spent proof outlives a Redis restart or
 *     failover, which forgets every key;
 *   - Redis (SET NX, the default of an engine built without the service's database): shared
 *     by every node, but a Redis that loses its data lets a copy still within its window
 *     be answered again.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import { PROOF_WINDOW_SECONDS } from './proof.js';
import { postgresSpendOnce, redisSpendOnce, type SpendOnce } from './spend-once.js';

/** How long a spent proof is kept: past it, the proof is too old to be accepted anyway. */
export const SPENT_PROOF_SECONDS = 2 * PROOF_WINDOW_SECONDS;

/** spend(payer, proof signature, seconds) */
export type SpentProofs = SpendOnce;

export const redisSpentProofs = (redis: Redis, prefix: string): SpentProofs => redisSpendOnce(redis, `${prefix}x402:proof:`);

export const postgresSpentProofs = (db: Db): SpentProofs => postgresSpendOnce(db, { table: 'x402_spent_proofs', owner: 'payer', token: 'signature' });
