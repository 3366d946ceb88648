/**
 * The pools kept by the pool sync worker: one row per (venue, pool), replaced on each
 * sync. Symbols are the venue's own (used to match queries); the catalog's enrichment
 * happens at read time. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('pools')
    .addColumn('venue', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('mint_x', 'text', (c) => c.notNull())
    .addColumn('mint_y', 'text', (c) => c.notNull())
    .addColumn('symbol_x', 'text')
    .addColumn('symbol_y', 'text')
    .addColumn('decimals_x', 'integer')
    .addColumn('decimals_y', 'integer')
    .addColumn('logo_x', 'text')
    .addColumn('logo_y', 'text')
    .addColumn('tvl', 'double precision')
    .addColumn('fee_rate', 'double precision')
    .addColumn('extras', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('synced_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('pools_pk', ['venue', 'address'])
    .execute();
  // One index per way a query matches a pool: by mint on either side, by symbol on either side.
  await sql`CREATE INDEX pools_mint_x_idx ON pools (mint_x)`.execute(db);
  await sql`CREATE INDEX pools_mint_y_idx ON pools (mint_y)`.execute(db);
  await sql`CREATE INDEX pools_symbol_x_idx ON pools (upper(symbol_x))`.execute(db);
  await sql`CREATE INDEX pools_symbol_y_idx ON pools (upper(symbol_y))`.execute(db);
  await sql`CREATE INDEX pools_address_idx ON pools (address)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('pools').ifExists().execute();
}
