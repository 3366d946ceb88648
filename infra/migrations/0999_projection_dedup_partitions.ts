/**
 * projection_dedup partitioned by projection (LIST), one partition per read model and a
 * default partition for any other name, so that a replay empties its model's dedup set
 * with a TRUNCATE of one partition instead of a DELETE of every row it holds (1M rows: a
 * DELETE writes and later vacuums 1M dead tuples; a TRUNCATE swaps in an empty file). A
 * partition is named `pd_<name, lower case, other characters as _>_<first 8 hex of
 * md5(name)>` (projections/runner/checkpoint.ts: dedupPartition); a projection without
 * one gets it at its first replay. Frozen.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/** the read models that kept a dedup set when this migration was written */
const PROJECTIONS = ['gateways', 'user-payments', 'payment-policies', 'composable-policies', 'payments', 'payment-stats', 'webhooks', 'merchant'];

const partitionOf = (name: string) =>
  `pd_${name.toLowerCase().replace(/[^a-z0-9]/g, '_').slice(0, 40)}_${createHash('md5').update(name).digest('hex').slice(0, 8)}`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`LOCK TABLE projection_dedup IN ACCESS EXCLUSIVE MODE`.execute(db);
  await sql`ALTER TABLE projection_dedup RENAME TO projection_dedup_unpartitioned`.execute(db);
  await sql`ALTER TABLE projection_dedup_unpartitioned RENAME CONSTRAINT projection_dedup_pk TO projection_dedup_unpartitioned_pk`.execute(db);
  await sql`
    CREATE TABLE projection_dedup (
      projection text NOT NULL,
      event_id text NOT NULL,
      CONSTRAINT projection_dedup_pk PRIMARY KEY (projection, event_id)
    ) PARTITION BY LIST (projection)`.execute(db);
  await sql`CREATE TABLE projection_dedup_default PARTITION OF projection_dedup DEFAULT`.execute(db);
  for (const p of PROJECTIONS) {
    await sql`CREATE TABLE ${sql.table(partitionOf(p))} PARTITION OF projection_dedup FOR VALUES IN (${sql.lit(p)})`.execute(db);
  }
  await sql`INSERT INTO projection_dedup (projection, event_id) SELECT projection, event_id FROM projection_dedup_unpartitioned`.execute(db);
  await sql`DROP TABLE projection_dedup_unpartitioned`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE projection_dedup RENAME TO projection_dedup_partitioned`.execute(db);
  await sql`ALTER TABLE projection_dedup_partitioned RENAME CONSTRAINT projection_dedup_pk TO projection_dedup_partitioned_pk`.execute(db);
  await sql`
    CREATE TABLE projection_dedup (
      projection text NOT NULL,
      event_id text NOT NULL,
      CONSTRAINT projection_dedup_pk PRIMARY KEY (projection, event_id)
    )`.execute(db);
  await sql`INSERT INTO projection_dedup (projection, event_id) SELECT projection, event_id FROM projection_dedup_partitioned`.execute(db);
  await sql`DROP TABLE projection_dedup_partitioned`.execute(db);
}
