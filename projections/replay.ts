/**
 * Replay: rebuilds a read model from the archive while the service runs.
 *
 * One transaction holds the projection's exclusive lock (live batches of that projection
 * wait on its shared side), empties its dedup set and builds its tables anew from the
 * archive in archive order: in fresh tables swapped in at the end where the tables allow
 * (replay-fresh.ts), else emptied and refilled in place. Readers see the old model until the commit (MVCC), then
 * the new one: never a half-built model. Live events that arrive meanwhile wait in the
 * stream; when the lock is released they are applied, and those the replay already
 * applied are absorbed by the dedup set. Before it starts, the replay waits until the
 * archive holds every event the live projection has applied, so none is dropped.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../infra/postgres/database.js';
import type { TributaryEvent } from '../src/kernel/events/envelope.js';
import type { Projection, Trx } from './runner/projection.js';
import { ensureDedupPartition, lockExclusive } from './runner/checkpoint.js';
import { buildInFreshTables, freshTablesSupported } from './replay-fresh.js';

/**
 * Archived events per page, each applied as one batch: a model that sums (payment stats)
 * writes one upsert per key a page touches, so larger pages write fewer times; a page of
 * 50,000 holds some 75 MB of events in the process (test/bench/README.md, "Settings the
 * benchmarks chose").
 */
const PAGE = 50_000;

interface ArchivedRow { seq: string; id: string; name: string; signature: string; slot: string; block_time: string | null; ix_path: string; event_index: number; data: TributaryEvent['data'] }

export function rowToEvent(r: Omit<ArchivedRow, 'seq'>): TributaryEvent {
  // the archive holds only events that were checked when read from the stream (parseEvent)
  return {
    id: r.id,
    name: r.name as TributaryEvent['name'],
    signature: r.signature,
    slot: Number(r.slot),
    blockTime: r.block_time === null ? null : Number(r.block_time),
    ixPath: r.ix_path,
    index: r.event_index,
    data: r.data,
  } as TributaryEvent;
}

async function archiveBehind(trx: Trx, projection: Projection): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM projection_dedup d
    WHERE d.projection = ${projection.name} AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)`.execute(trx);
  const behind = Number(r.rows[0]?.n ?? 0);
  const own = projection.absorbs;
  if (behind > 0 || own === undefined) return behind;
  // the events the projection's rows absorb (Projection.absorbs) are ids of its table instead
  const a = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${sql.table(own.table)} t
    WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = t.${sql.ref(own.idColumn)})`.execute(trx);
  return Number(a.rows[0]?.n ?? 0);
}

const pageAfter = async (q: Db | Trx, after: string, size: number): Promise<ArchivedRow[]> => (await sql<ArchivedRow>`
  SELECT seq, id, name, signature, slot, block_time, ix_path, event_index, data
  FROM events WHERE seq > ${after}::bigint ORDER BY seq LIMIT ${size}`.execute(q)).rows;

/** The page after `after`, being read on a connection of its own; `started` once it has one. */
interface PageAhead { after: string; started: boolean; rows: Promise<ArchivedRow[]> }

function readAhead(db: Db, after: string, size: number): PageAhead {
  const ahead: PageAhead = { after, started: false, rows: Promise.resolve([]) };
  ahead.rows = db.connection().execute((c) => { ahead.started = true; return pageAfter(c, after, size); });
  ahead.rows.catch(() => undefined); // awaited when its page is needed, or once the replay ends
  return ahead;
}

/**
 * Applies the whole archive, page by page in archive order; returns the events applied and
 * the last seq. The next page is read on another connection of the pool while this one
 * applies the current page, so that Postgres reads it and this process parses it while the
 * model's rows are written (a page alone: about a second of a payments replay of 200k
 * events, loaded machine). Each page is one statement in READ COMMITTED, as it was on the
 * replay's connection, and the replay never writes the archive: the pages are the same.
 * When the pool has no connection free by the time a page is needed, it is read on the
 * replay's connection, and no read ahead is begun until the one waiting has run.
 */
async function applyArchive(db: Db, trx: Trx, projection: Projection, size: number): Promise<{ total: number; after: string }> {
  let after = '0';
  let total = 0;
  let ahead: PageAhead | undefined;
  try {
    let rows = await pageAfter(trx, after, size);
    while (rows.length > 0) {
      after = rows[rows.length - 1]!.seq;
      if (ahead === undefined || ahead.started) ahead = readAhead(db, after, size);
      // ids are the archive's primary key and the dedup set was emptied: all are new
      await projection.apply(trx, rows.map(rowToEvent));
      total += rows.length;
      rows = ahead.started && ahead.after === after ? await ahead.rows : await pageAfter(trx, after, size);
    }
  } finally {
    if (ahead?.started) await ahead.rows.catch(() => undefined);
  }
  return { total, after };
}

/** Milliseconds of a replay's steps (printed by the spine bench). */
export interface ReplaySteps {
  /** fresh tables created (or the old rows deleted, in place), dedup partition truncated */
  prepareMs: number;
  /** the archive read and applied */
  applyMs: number;
  /** the fresh tables' other indexes built and analyzed (0 in place) */
  indexMs: number;
  /** old tables dropped, new ones moved in (0 in place) */
  swapMs: number;
  /** the dedup set and the checkpoint written */
  dedupMs: number;
  /** whether the model was built in fresh tables (replay-fresh.ts) or in place */
  fresh: boolean;
}

async function rebuild(db: Db, trx: Trx, projection: Projection, dedup: string, page: number): Promise<{ events: number; steps: ReplaySteps }> {
  const started = performance.now();
  // the projection's own partition (migration 0999): emptied at once, nothing to vacuum
  await sql`TRUNCATE ${sql.table(dedup)}`.execute(trx);
  const fresh = await freshTablesSupported(trx, projection.tables);
  let built: { total: number; after: string };
  let steps: Omit<ReplaySteps, 'dedupMs'>;
  if (fresh) {
    const r = await buildInFreshTables(trx, projection.name, fresh, () => applyArchive(db, trx, projection, page));
    built = r.result;
    steps = { prepareMs: performance.now() - started - r.timings.buildMs - r.timings.indexMs - r.timings.swapMs, applyMs: r.timings.buildMs, indexMs: r.timings.indexMs, swapMs: r.timings.swapMs, fresh: true };
  } else {
    for (const t of [...projection.tables].reverse()) await sql`DELETE FROM ${sql.table(t.name)}`.execute(trx);
    const prepareMs = performance.now() - started;
    built = await applyArchive(db, trx, projection, page);
    steps = { prepareMs, applyMs: performance.now() - started - prepareMs, indexMs: 0, swapMs: 0, fresh: false };
  }
  const dedupAt = performance.now();
  // the dedup set of what was applied, written by the server in one statement, in key
  // order: its index then grows at its right edge, page after page, instead of taking
  // each id at a random leaf (200k ids: the random order cost 1.3-3.2 s, loaded machine)
  // (less the events its own rows absorb: Projection.absorbs)
  const absorbed = projection.absorbs?.names ?? [];
  await sql`
    INSERT INTO ${sql.table(dedup)} (projection, event_id)
    SELECT ${projection.name}::text, id FROM events WHERE seq <= ${built.after}::bigint
      ${absorbed.length > 0 ? sql`AND name <> ALL(${absorbed}::text[])` : sql``} ORDER BY id`.execute(trx);
  await sql`
    INSERT INTO projection_checkpoints (projection, last_stream_id, events_applied, updated_at)
    VALUES (${projection.name}, '0-0', ${built.total}, now())
    ON CONFLICT (projection) DO UPDATE SET events_applied = EXCLUDED.events_applied, updated_at = now()`.execute(trx);
  return { events: built.total, steps: { ...steps, dedupMs: performance.now() - dedupAt } };
}

export interface ReplayResult { projection: string; events: number; digest: string; ms: number; steps: ReplaySteps }

export interface ReplayOptions {
  /** called once a bootstrap has decided to replay, before it starts */
  starting?: () => void;
  waitMs?: number;
  /** archived events per page (PAGE by default) */
  page?: number;
  /** called once the rebuilt model is committed: API nodes' cached answers of it expire (read-cache.ts) */
  committed?: () => Promise<unknown>;
}

export async function replayProjection(db: Db, projection: Projection, opts: ReplayOptions = {}): Promise<ReplayResult> {
  if (!projection.replayable) throw new Error(`${projection.name} is the replay source and cannot be replayed`);
  const started = Date.now();
  const deadline = started + (opts.waitMs ?? 60_000);
  const dedup = await ensureDedupPartition(db, projection.name);
  for (;;) {
    const built = await db.transaction().execute(async (trx) => {
      await lockExclusive(trx, projection.name);
      if ((await archiveBehind(trx, projection)) > 0) return undefined;
      return rebuild(db, trx, projection, dedup, opts.page ?? PAGE);
    });
    if (built !== undefined) {
      const { events, steps } = built;
      await opts.committed?.();
      const digest = await projectionDigest(db, projection);
      await db.insertInto('replay_runs').values({ projection: projection.name, events, digest, finished_at: new Date() }).execute();
      return { projection: projection.name, events, digest, ms: Date.now() - started, steps };
    }
    if (Date.now() > deadline) {
      throw new Error(`the archive is behind ${projection.name}; is the archive projection running?`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A digest of a projection's tables: equal digests, equal read models. Each row is hashed
 * twice, with seeds 0 and 1, by hash_record_extended (each column by its own type's hash
 * function: no text form of the row is built), and a table's hashes are summed exactly
 * (numeric): two 64-bit sums and the row count, whatever the rows' order, a duplicate row
 * counted twice. A row's text form, md5 of it and a sort of the hashes cost about five
 * times as much: 1.57 s against 0.25-0.39 s for a 200k-row payments table, the same
 * minutes (the text form alone 0.85 s). Not a defence against a crafted collision: it
 * compares builds of one history, under one schema and one Postgres version.
 *
 * Columns left out (`volatile`) are dropped from the row's jsonb, hashed as jsonb. The
 * sums are computed by parallel workers (partial aggregates), which the planner's default
 * costs never choose for them, so this statement alone is planned with parallel setup and
 * tuple costs of zero; a table too small for a parallel scan is read as before.
 */
export async function projectionDigest(db: Db, projection: Projection): Promise<string> {
  const h = createHash('sha256');
  for (const t of projection.tables) {
    const drop = (t.volatile ?? []).map((c) => sql`- ${c}::text`);
    const hash = (seed: number) => (drop.length === 0
      ? sql`hash_record_extended(x, ${sql.lit(seed)})`
      : sql`jsonb_hash_extended(to_jsonb(x) ${sql.join(drop, sql` `)}, ${sql.lit(seed)})`);
    const r = await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL parallel_setup_cost = 0`.execute(trx);
      await sql`SET LOCAL parallel_tuple_cost = 0`.execute(trx);
      return sql<{ a: string | null; b: string | null; n: string }>`
        SELECT sum(${hash(0)}::numeric)::text AS a, sum(${hash(1)}::numeric)::text AS b, count(*) AS n
        FROM ${sql.table(t.name)} x`.execute(trx);
    });
    const row = r.rows[0];
    h.update(`${t.name}:${row?.n}:${row?.a ?? ''}:${row?.b ?? ''}\n`);
  }
  return h.digest('hex');
}

/**
 * A projection that has never run (no checkpoint) while the archive already holds events
 * (one added after the stream was trimmed) is first built from the archive, not the
 * stream. Returns whether it replayed.
 */
export async function bootstrapFromArchive(db: Db, projection: Projection, opts: ReplayOptions = {}): Promise<boolean> {
  if (!projection.replayable) return false;
  const cp = await db.selectFrom('projection_checkpoints').select('projection').where('projection', '=', projection.name).executeTakeFirst();
  if (cp) return false;
  const any = await sql<{ one: number }>`SELECT 1 AS one FROM events LIMIT 1`.execute(db);
  if (any.rows.length === 0) return false;
  opts.starting?.();
  await replayProjection(db, projection, opts);
  return true;
}
