/** Checkpoint and dedup writes, always inside the batch's transaction. */
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

/** Keeps the first occurrence of each identity that this projection has not applied yet. */
export async function filterNew(trx: Trx, projection: string, events: readonly TributaryEvent[]): Promise<TributaryEvent[]> {
  const unique = new Map<string, TributaryEvent>();
  for (const e of events) if (!unique.has(e.id)) unique.set(e.id, e);
  if (unique.size === 0) return [];
  // one statement of two parameters, whatever the batch size (bulk.ts)
  const { rows } = await sql<{ event_id: string }>`
    INSERT INTO projection_dedup (projection, event_id)
    SELECT ${projection}::text, id FROM unnest(${[...unique.keys()]}::text[]) AS u(id)
    ON CONFLICT DO NOTHING RETURNING event_id`.execute(trx);
  const fresh = new Set(rows.map((r) => r.event_id));
  return [...unique.values()].filter((e) => fresh.has(e.id));
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
