/**
 * The Sign-In-With-X nonces spent, kept by Postgres (commands/x402/plugins/siwx-nonces.ts). Frozen.
 *
 * A signed sign-in message is answered once. Its nonce was spent in Redis alone, which keeps
 * nothing on disk: after a restart (or a failover to a replica that had not received the
 * write) a copy of a message still within its age was answered again, with a fresh JWT for
 * the wallet's policy. A row per (wallet, nonce) until the message can no longer be accepted;
 * rows past `expires_at` are deleted by the next spend.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('x402_siwx_nonces')
    .addColumn('wallet', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('x402_siwx_nonces_pkey', ['wallet', 'nonce'])
    .execute();
  await sql`CREATE INDEX x402_siwx_nonces_expiry_idx ON x402_siwx_nonces (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('x402_siwx_nonces').ifExists().execute();
}
