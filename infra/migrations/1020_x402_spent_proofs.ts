/**
 * The x402 payment proofs spent, kept by Postgres (commands/x402/spent-proofs.ts). Frozen.
 *
 * A payer's proof (payload.proof, commands/x402/proof.ts) was checked for its signature and
 * its age alone, so a copy of a Payment header (a proxy's log, an MCP host's transcript)
 * presented within 300 s got a JWT for the payer's policy, and over MCP metered a call to the
 * payer. A proof now buys one answer: a row per (payer, proof signature) once a JWT was issued
 * from it, until the proof can no longer be accepted; rows past `expires_at` are deleted by
 * the next spend.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('x402_spent_proofs')
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('x402_spent_proofs_pkey', ['payer', 'signature'])
    .execute();
  await sql`CREATE INDEX x402_spent_proofs_expiry_idx ON x402_spent_proofs (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('x402_spent_proofs').ifExists().execute();
}
