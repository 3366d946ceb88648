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
 * Two stores, as for the Sign-In-With-X nonces (plugins/siwx-nonces.ts):
 *   - Postgres (the service's: migration 1020): the spent proof outlives a Redis restart or
 *     failover, which forgets every key;
 *   - Redis (SET NX, the default of an engine built without the service's database): shared
 *     by every node, but a Redis that loses its data lets a copy still within its window
 *     be answered again.
 */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import { PROOF_WINDOW_SECONDS } from './proof.js';

/** How long a spent proof is kept: past it, the proof is too old to be accepted anyway. */
export const SPENT_PROOF_SECONDS = 2 * PROOF_WINDOW_SECONDS;

export interface SpentProofs {
  /** where the proofs are kept, for the 503 when the store does not answer */
  store: string;
  /** records `signature` as spent by `payer` for `seconds`; false when it was spent already */
  spend(payer: string, signature: string, seconds: number): Promise<boolean>;
}

export function redisSpentProofs(redis: Redis, prefix: string): SpentProofs {
  return {
    store: 'Redis',
    async spend(payer, signature, seconds) {
      return (await redis.set(`${prefix}x402:proof:${payer}:${signature}`, '1', 'EX', seconds, 'NX')) === 'OK';
    },
  };
}

export function postgresSpentProofs(db: Db): SpentProofs {
  return {
    store: 'Postgres',
    async spend(payer, signature, seconds) {
      // the rows past their time go with the next spend (x402_spent_proofs_expiry_idx)
      const r = await sql<{ signature: string }>`
        WITH pruned AS (DELETE FROM x402_spent_proofs WHERE expires_at < now())
        INSERT INTO x402_spent_proofs (payer, signature, expires_at) VALUES (${payer}, ${signature}, now() + make_interval(secs => ${seconds}))
        ON CONFLICT (payer, signature) DO NOTHING RETURNING signature`.execute(db);
      return r.rows.length === 1;
    },
  };
}
