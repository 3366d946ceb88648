/** Checkpoint and dedup writes, always inside the batch's transaction. */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { Trx } from './projection.js';
import type { Db } from '../../infra/postgres/database.js';

/** Serialises live batches (shared) against a replay of the same projection (exclusive). */
export async function lockShared(trx: Trx, projection: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock_shared(hashtext(${'projection:' + projection}))`.execute(trx);
}
export async function lockExclusive(trx: Trx, projection: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${'projection:' + projection}))`.execute(trx);
}

/**
 * Batches of at least this many identities are first inserted plainly, inside a savepoint:
 * a plain insert costs the server about half of ON CONFLICT's per-row check (100k ids:
 * ~1.4-1.9 s against ~2.6-3.1 s, loaded machine), and almost every id of a large batch is
 * new. Below it the two extra round trips (SAVEPOINT, RELEASE) cost more than they save.
 */
export const PLAIN_DEDUP_MIN = 64;

const UNIQUE_VIOLATION = '23505';

/**
 * Keeps the first occurrence of each identity that this projection has not applied yet.
 * Events named in `absorbed` (Projection.absorbs) are kept without the dedup set: the
 * projection's own rows absorb a second copy of them.
 */
export async function filterNew(
  trx: Trx, projection: string, events: readonly TributaryEvent[], absorbed: readonly string[] = [],
): Promise<TributaryEvent[]> {
  const unique = new Map<string, TributaryEvent>();
  for (const e of events) if (!unique.has(e.id)) unique.set(e.id, e);
  const all = [...unique.values()];
  const checked = absorbed.length === 0 ? all : all.filter((e) => !absorbed.includes(e.name));
  const fresh = await recordNew(trx, projection, checked.map((e) => e.id));
  return fresh === undefined ? all : all.filter((e) => fresh.has(e.id) || absorbed.includes(e.name));
}

/** Adds `ids` (distinct) to the projection's dedup set; returns those it did not hold, or undefined when it held none of them. */
async function recordNew(trx: Trx, projection: string, ids: readonly string[]): Promise<ReadonlySet<string> | undefined> {
  if (ids.length === 0) return undefined;
  if (ids.length >= PLAIN_DEDUP_MIN) {
    // all new (the usual case): one plain insert; one seen before fails it as a whole, the
    // savepoint undoes it, and the per-row path below decides, as it alone would have
    await sql`SAVEPOINT dedup`.execute(trx);
    try {
      await sql`INSERT INTO projection_dedup (projection, event_id) SELECT ${projection}::text, id FROM unnest(${ids}::text[]) AS u(id)`.execute(trx);
      await sql`RELEASE SAVEPOINT dedup`.execute(trx);
      return undefined;
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      await sql`ROLLBACK TO SAVEPOINT dedup`.execute(trx);
      await sql`RELEASE SAVEPOINT dedup`.execute(trx);
    }
  }
  // one statement of two parameters, whatever the batch size (bulk.ts)
  const { rows } = await sql<{ event_id: string }>`
    INSERT INTO projection_dedup (projection, event_id)
    SELECT ${projection}::text, id FROM unnest(${ids}::text[]) AS u(id)
    ON CONFLICT DO NOTHING RETURNING event_id`.execute(trx);
  return new Set(rows.map((r) => r.event_id));
}

/** Advances the checkpoint to the greater of its stream id and `streamId`. */
export async function advanceCheckpoint(trx: Trx, projection: string, streamId: string, applied: number): Promise<void> {
  await sql`
    INSERT INTO projection_checkpoints AS pc (projection, last_stream_id, events_applied, updated_at)
    VALUES (${projection}, ${streamId}, ${applied}, now())
    ON CONFLICT (projection) DO UPDATE SET
      last_stream_id = CASE
        WHEN (split_part(EXCLUDED.last_stream_id, '-', 1)::numeric, split_part(EXCLUDED.last_stream_id, '-', 2)::numeric)
           > (split_part(pc.last_stream_id, '-', 1)::numeric, split_part(pc.last_stream_id, '-', 2)::numeric)
        THEN EXCLUDED.last_stream_id ELSE pc.last_stream_id END,
      events_applied = pc.events_applied + EXCLUDED.events_applied,
      updated_at = now()`.execute(trx);
}

/** Every projection's checkpoint, for status reports. */
export async function readCheckpoints(db: Db): Promise<Map<string, { lastStreamId: string; eventsApplied: string }>> {
  const rows = await db.selectFrom('projection_checkpoints').select(['projection', 'last_stream_id', 'events_applied']).execute();
  return new Map(rows.map((c) => [c.projection, { lastStreamId: c.last_stream_id, eventsApplied: String(c.events_applied) }]));
}

/**
 * The partition of projection_dedup that holds `projection`'s set (migration 0999): its
 * name, lower case with other characters as _, and the first 8 hex of its md5.
 */
export function dedupPartition(projection: string): string {
  const slug = projection.toLowerCase().replace(/[^a-z0-9]/g, '_').slice(0, 40);
  return `pd_${slug}_${createHash('md5').update(projection).digest('hex').slice(0, 8)}`;
}

/**
 * Gives `projection` its own dedup partition if it has none (a read model added after
 * migration 0999; the others got theirs there), so a replay can TRUNCATE it. Its rows
 * move out of the default partition in one short transaction under the projection's
 * exclusive lock (live batches of it wait; other models' never do: attaching locks the
 * parent in SHARE UPDATE EXCLUSIVE mode, which inserts do not conflict with).
 */
export async function ensureDedupPartition(db: Db, projection: string): Promise<string> {
  const part = dedupPartition(projection);
  const exists = async (q: Db | Trx) => (await sql<{ r: string | null }>`SELECT to_regclass(${part}) AS r`.execute(q)).rows[0]?.r != null;
  if (await exists(db)) return part;
  await db.transaction().execute(async (trx) => {
    await lockExclusive(trx, projection);
    if (await exists(trx)) return;
    const t = sql.table(part);
    const value = sql.lit(projection);
    await sql`CREATE TABLE ${t} (projection text NOT NULL CHECK (projection = ${value}), event_id text NOT NULL, PRIMARY KEY (projection, event_id))`.execute(trx);
    await sql`WITH moved AS (DELETE FROM projection_dedup_default WHERE projection = ${projection} RETURNING projection, event_id)
      INSERT INTO ${t} (projection, event_id) SELECT projection, event_id FROM moved`.execute(trx);
    await sql`ALTER TABLE projection_dedup ATTACH PARTITION ${t} FOR VALUES IN (${value})`.execute(trx);
  });
  return part;
}
