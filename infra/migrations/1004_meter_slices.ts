/**
 * Each admitted request holds a slice of what it was admitted against (commands/x402/meter-slices.ts):
 * of its credit (prepaid_usage.slice), of its policy's period cap (payg_usage.period_slice) and
 * of its payer account's position (payg_usage.account_slice). The Redis counters hand the
 * slices out; Postgres keeps two requests from ever holding overlapping slices, so a counter
 * restored from an older snapshot cannot admit past what the ledger holds. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS btree_gist`.execute(db);
  await sql`ALTER TABLE prepaid_usage ADD COLUMN slice int8range`.execute(db);
  await sql`ALTER TABLE prepaid_usage ADD CONSTRAINT prepaid_usage_slice_excl EXCLUDE USING gist (policy WITH =, slice WITH &&)`.execute(db);
  await sql`ALTER TABLE payg_usage ADD COLUMN period_slice int8range, ADD COLUMN account_slice int8range`.execute(db);
  await sql`ALTER TABLE payg_usage ADD CONSTRAINT payg_usage_period_slice_excl EXCLUDE USING gist (policy WITH =, period_start WITH =, period_slice WITH &&)`.execute(db);
  await sql`ALTER TABLE payg_usage ADD CONSTRAINT payg_usage_account_slice_excl EXCLUDE USING gist (user_payment WITH =, account_slice WITH &&)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage DROP CONSTRAINT IF EXISTS payg_usage_account_slice_excl, DROP CONSTRAINT IF EXISTS payg_usage_period_slice_excl`.execute(db);
  await sql`ALTER TABLE payg_usage DROP COLUMN IF EXISTS account_slice, DROP COLUMN IF EXISTS period_slice`.execute(db);
  await sql`ALTER TABLE prepaid_usage DROP CONSTRAINT IF EXISTS prepaid_usage_slice_excl, DROP COLUMN IF EXISTS slice`.execute(db);
}
