/**
 * The wallet whose gateway JWT created an API key (null: the administrator, and every key
 * made before this column existed, which keeps working as it did). Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE gateway_api_keys ADD COLUMN IF NOT EXISTS created_by text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE gateway_api_keys DROP COLUMN IF EXISTS created_by`.execute(db);
}
