/**
 * x402 `exact` on Solana with the service as facilitator (commands/x402/exact):
 * - x402_fee_payers: the fee payer keys, one active per network (retires_at null), sealed
 *   like the JWT signing keys; a rotated-out key keeps signing for its grace period.
 * - x402_exact_settlements: one row per transaction message (its sha256, the key the
 *   @x402/svm facilitator derives): the signature sent while its fate is open, the stored
 *   answer once settled. It makes settlement once across nodes and is the exact payments'
 *   ledger (merchant revenue and exports read it). Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('x402_fee_payers')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('retires_at', 'timestamptz')
    .execute();
  await sql`CREATE UNIQUE INDEX x402_fee_payers_one_active ON x402_fee_payers (network) WHERE retires_at IS NULL`.execute(db);

  await db.schema
    .createTable('x402_exact_settlements')
    .addColumn('message_hash', 'text', (c) => c.primaryKey())
    // sending | settled | failed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('signature', 'text')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('fee_payer', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('pay_to', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('amount', sql`numeric(40,0)`, (c) => c.notNull())
    .addColumn('resource', 'text')
    .addColumn('memo', 'text')
    .addColumn('answer', 'json')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('settled_at', 'timestamptz')
    .execute();
  await sql`CREATE UNIQUE INDEX x402_exact_settlements_signature ON x402_exact_settlements (signature) WHERE signature IS NOT NULL`.execute(db);
  await sql`CREATE INDEX x402_exact_settlements_gateway ON x402_exact_settlements (gateway, settled_at) WHERE state = 'settled'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('x402_exact_settlements').ifExists().execute();
  await db.schema.dropTable('x402_fee_payers').ifExists().execute();
}
