/**
 * x402 `exact` on a route of this service serves one request per payment: the settlement's
 * row records when its request was served, so a copy of the payment is refused on every
 * node and after Redis loses its keys (a second request served for one payment would be
 * served unpaid). Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE x402_exact_settlements ADD COLUMN served_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE x402_exact_settlements DROP COLUMN IF EXISTS served_at`.execute(db);
}
