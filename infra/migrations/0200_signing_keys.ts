/** Signing keys of issued JWTs (commands/keys). Frozen. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    // 'aes-256-gcm:v1:<iv>:<tag>:<ciphertext>' (base64url) or 'plain:<jwk json>' in development mode;
    // null once the key is rotated out: only the active key ever signs.
    .addColumn('private_jwk', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    // null while active; set at rotation to the end of the grace period
    .addColumn('retires_at', 'timestamptz')
    .execute();
  // At most one active key, whatever the number of nodes starting or rotating at once.
  await sql`CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((true)) WHERE retires_at IS NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signing_keys').ifExists().execute();
}
