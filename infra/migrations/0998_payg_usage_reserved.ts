/**
 * payg_usage.reserved_until: a chunk is written to the ledger before it is admitted and
 * before its request is served. Until the request is answered, the row is only a
 * reservation (reserved_until set): the settler charges none, and one left behind by a
 * process that died before serving is dropped once reserved_until has passed, so a payer
 * is charged only for requests served. NULL: served (every row written before this
 * migration, too). The partial index holds the few open reservations. Frozen.
 *
 * A plain CREATE INDEX: migrations run in a transaction, where CONCURRENTLY cannot.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage ADD COLUMN IF NOT EXISTS reserved_until timestamptz`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS payg_usage_reserved_idx ON payg_usage (reserved_until) WHERE reserved_until IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS payg_usage_reserved_idx`.execute(db);
  await sql`ALTER TABLE payg_usage DROP COLUMN IF EXISTS reserved_until`.execute(db);
}
