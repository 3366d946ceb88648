/**
 * A token spent once per owner, for as long as it could still be accepted: the shared store of
 * the Sign-In-With-X nonces (plugins/siwx-nonces.ts) and the payment proofs (spent-proofs.ts).
 *   - Postgres (the service's): a spent token outlives a Redis restart or failover, which
 *     forgets every key; the rows past their time go with the next spend (an index on expires_at);
 *   - Redis (SET NX, the default of an engine built without the service's database): shared by
 *     every node, but a Redis that loses its data lets a copy still within its age be answered again.
 */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';

export interface SpendOnce {
  /** where the tokens are kept, for the 503 when the store does not answer */
  store: string;
  /** records `token` as spent by `owner` for `seconds`; false when it was spent already */
  spend(owner: string, token: string, seconds: number): Promise<boolean>;
}

/** Keys `<keyPrefix><owner>:<token>`. */
export function redisSpendOnce(redis: Redis, keyPrefix: string): SpendOnce {
  return {
    store: 'Redis',
    async spend(owner, token, seconds) {
      return (await redis.set(`${keyPrefix}${owner}:${token}`, '1', 'EX', seconds, 'NX')) === 'OK';
    },
  };
}

/** Rows of `table` keyed by (`owner`, `token`) columns, with expires_at. */
export function postgresSpendOnce(db: Db, t: { table: string; owner: string; token: string }): SpendOnce {
  const [table, owner, token] = [sql.table(t.table), sql.ref(t.owner), sql.ref(t.token)];
  return {
    store: 'Postgres',
    async spend(who, what, seconds) {
      const r = await sql<{ spent: string }>`
        WITH pruned AS (DELETE FROM ${table} WHERE expires_at < now())
        INSERT INTO ${table} (${owner}, ${token}, expires_at) VALUES (${who}, ${what}, now() + make_interval(secs => ${seconds}))
        ON CONFLICT (${owner}, ${token}) DO NOTHING RETURNING ${token} AS spent`.execute(db);
      return r.rows.length === 1;
    },
  };
}
