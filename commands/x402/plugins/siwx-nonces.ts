/**
 * Where Sign-In-With-X nonces are spent (siwx.ts): a signed message is answered once, so its
 * nonce is recorded when it is answered and a copy of the message is refused for as long as
 * the message could still be accepted.
 *
 * A nonce is spent per wallet: it is the signer's replay guard, not a name the service owns.
 * Keyed by the nonce alone, anyone who read a challenge could spend its nonce with a wallet of
 * their own first, and the payer's sign-in would be refused as a replay.
 *
 * Two stores:
 *   - Postgres (the service's: migration 1016): the spent nonce outlives a Redis restart or
 *     failover, which forgets every key (Redis keeps nothing on disk here), and with it every
 *     nonce a copied message could have been refused by;
 *   - Redis (SET NX, the default of a middleware built without the service's database): shared
 *     by every node, but a Redis that loses its data lets a copy of a message still within its
 *     age be answered again, with a fresh JWT for the wallet's policy.
 */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../../infra/postgres/database.js';

export interface SignInNonces {
  /** where the nonces are kept, for the 503 when the store does not answer */
  store: string;
  /** records `nonce` as spent by `wallet` for `seconds`; false when it was spent already */
  spend(wallet: string, nonce: string, seconds: number): Promise<boolean>;
}

export function redisSignInNonces(redis: Redis, prefix: string): SignInNonces {
  return {
    store: 'Redis',
    async spend(wallet, nonce, seconds) {
      return (await redis.set(`${prefix}x402:siwx:nonce:${wallet}:${nonce}`, '1', 'EX', seconds, 'NX')) === 'OK';
    },
  };
}

export function postgresSignInNonces(db: Db): SignInNonces {
  return {
    store: 'Postgres',
    async spend(wallet, nonce, seconds) {
      // the rows past their time go with the next spend (x402_siwx_nonces_expiry_idx); one that is
      // past its time and spent again is still refused, and its message is too old by then anyway
      const r = await sql<{ nonce: string }>`
        WITH pruned AS (DELETE FROM x402_siwx_nonces WHERE expires_at < now())
        INSERT INTO x402_siwx_nonces (wallet, nonce, expires_at) VALUES (${wallet}, ${nonce}, now() + make_interval(secs => ${seconds}))
        ON CONFLICT (wallet, nonce) DO NOTHING RETURNING nonce`.execute(db);
      return r.rows.length === 1;
    },
  };
}
