/**
 * The server-side insert limit: pgbench, 2 clients, each statement inserting 500 rows
 * that the server generates itself (generate_series), into a table shaped as `events`
 * (its columns, defaults and every index, the GIN on `data` included). No client
 * builds, sends or parses a row: it is what Postgres alone takes on this machine now.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { pgbench, settleWal } from './harness.js';

export const ROWS_PER_STATEMENT = 500;

const INSERT_500 = `INSERT INTO insert_limit (id, name, signature, slot, block_time, ix_path, event_index, memo, data)
SELECT md5(random()::text) || ':0:' || g, 'PaymentRecord', md5(random()::text) || md5(random()::text), 1000 + g, 1700000000 + g, '0', 0,
  decode(rpad(md5(g::text), 128, '0'), 'hex'),
  jsonb_build_object('payment_policy', md5(g::text), 'gateway', md5((g % 5)::text), 'amount', (1000 + g)::text,
    'timestamp', (1700000000 + g)::text, 'memo', 'trk-' || (g % 20), 'record_id', g, 'payer', md5((g % 7)::text),
    'recipient', md5((g % 3)::text), 'token_mint', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')
FROM generate_series(1, ${ROWS_PER_STATEMENT}) g`;

/** Rows per second Postgres inserts into an `events`-shaped table, measured now. */
export async function serverInsertLimit(db: Db, dbUrl: string, seconds = 10): Promise<number> {
  await sql`CREATE TABLE insert_limit (LIKE events INCLUDING DEFAULTS INCLUDING INDEXES)`.execute(db);
  try {
    await settleWal(db);
    const r = await pgbench(dbUrl, INSERT_500.replace(/\n/g, ' '), 2, seconds);
    return r.tps * ROWS_PER_STATEMENT;
  } finally {
    await sql`DROP TABLE insert_limit`.execute(db);
  }
}
