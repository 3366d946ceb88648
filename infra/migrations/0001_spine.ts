/** The event spine: checkpoints, dedup, replay runs, and the append-only archive. Frozen. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('projection_checkpoints')
    .addColumn('projection', 'text', (c) => c.primaryKey())
    .addColumn('last_stream_id', 'text', (c) => c.notNull())
    .addColumn('events_applied', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('projection_dedup')
    .addColumn('projection', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('projection_dedup_pk', ['projection', 'event_id'])
    .execute();
  await db.schema
    .createTable('replay_runs')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('projection', 'text', (c) => c.notNull())
    .addColumn('events', 'bigint', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('slot', 'bigint', (c) => c.notNull())
    .addColumn('block_time', 'bigint')
    .addColumn('ix_path', 'text', (c) => c.notNull())
    .addColumn('event_index', 'integer', (c) => c.notNull())
    .addColumn('memo', 'bytea')
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .execute();
  // One index per filter mode of the events API; every list is newest first (slot, seq).
  await sql`CREATE INDEX events_signature_idx ON events (signature, event_index)`.execute(db);
  await sql`CREATE INDEX events_slot_idx ON events (slot DESC, seq DESC)`.execute(db);
  await sql`CREATE INDEX events_name_slot_idx ON events (name, slot DESC, seq DESC)`.execute(db);
  await sql`CREATE INDEX events_time_idx ON events (block_time DESC, seq DESC)`.execute(db);
  await sql`CREATE INDEX events_name_time_idx ON events (name, block_time DESC)`.execute(db);
  await sql`CREATE INDEX events_memo_idx ON events (memo, slot DESC) WHERE memo IS NOT NULL`.execute(db);
  await sql`CREATE INDEX events_data_idx ON events USING gin (data jsonb_path_ops)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['events', 'replay_runs', 'projection_dedup', 'projection_checkpoints']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
