/**
 * Reads of the archive `events` table for the events API. Every list is newest first
 * (slot DESC, seq DESC: the order of the chain, then of arrival) and paginated. Filters on
 * event fields use jsonb containment (`data @> {...}`), found through the GIN index of
 * events_keyed_data(data) (migration 1001); the other conditions each have a btree index
 * (migrations 0001, 1000).
 */
import { sql, type ExpressionBuilder, type Expression, type RawBuilder, type Selectable, type AliasedSelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { queryCell, type JsonText } from '../../infra/postgres/text-query.js';
import { compileShaped } from '../../infra/postgres/compiled-shapes.js';
import type { Database } from '../../infra/postgres/schema.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import { hasTimeRange, type TimeRange } from './params.js';
import { toApiEvent, type ApiEvent } from '../../src/kernel/wire/api-event.js';

export { toApiEvent, type ApiEvent };

export interface Page { limit: number; offset: number }

/** Conditions, all ANDed; the route decides which ones a request sets. */
export interface EventWhere {
  name?: EventName;
  slot?: number;
  minSlot?: number;
  maxSlot?: number;
  /** memo encodings, any of which matches */
  memos?: readonly Buffer[];
  time?: TimeRange;
  /** exact values of top-level data fields (snake_case IDL names) */
  fields?: Readonly<Record<string, string>>;
}

const COLUMNS = ['id', 'name', 'signature', 'slot', 'block_time', 'ix_path', 'event_index', 'data'] as const;
type PageRow = Pick<Selectable<Database['events']>, typeof COLUMNS[number] | 'seq'>;

function conditions(w: EventWhere) {
  return (eb: ExpressionBuilder<Database, 'events'>): Expression<SqlBool> => {
    const all: Expression<SqlBool>[] = [];
    // a literal, not a parameter: see listEventsJson
    if (w.name !== undefined) all.push(eb('name', '=', sql.lit(w.name)));
    if (w.slot !== undefined) all.push(eb('slot', '=', String(w.slot)));
    if (w.minSlot !== undefined) all.push(eb('slot', '>=', String(w.minSlot)));
    if (w.maxSlot !== undefined) all.push(eb('slot', '<=', String(w.maxSlot)));
    if (w.memos !== undefined) all.push(eb('memo', 'in', [...w.memos]));
    if (w.time?.from !== undefined) all.push(eb('block_time', '>=', String(w.time.from)));
    if (w.time?.to !== undefined) all.push(eb('block_time', '<=', String(w.time.to)));
    if (w.fields !== undefined && Object.keys(w.fields).length > 0) {
      // the first finds the candidates through the GIN index (migration 1001), the second is exact
      const fields = JSON.stringify(w.fields);
      all.push(sql<SqlBool>`events_keyed_data(data) @> events_keyed_data(${fields}::jsonb)`, sql<SqlBool>`data @> ${fields}::jsonb`);
    }
    return eb.and(all);
  };
}

/**
 * Rows a time window's plan probes for through the block-time index (index entries only,
 * in index order, so that no estimate turns a probe into a scan of the table); more when
 * the page ends deeper (offset + limit), so that a window walked by slot always holds the
 * whole page and the walk never runs on past the window's oldest event.
 */
const WINDOW_PROBE = 10_000;
const probeCap = (page: Page): number => Math.max(WINDOW_PROBE, page.offset + page.limit);

/** How a page with a time window is read; see windowPlan. */
const SMALL_WINDOW = 1;
const SLOT_WALK = 2;
const WIDE_WINDOW = 3;

/**
 * Which way a page with a time window is read. Block time follows slot, so walking the
 * slot index from the newest event and filtering on block time reads every event newer
 * than the window before its first match; the planner, which assumes the window's rows
 * spread evenly over the slots, picks that walk for deep windows of a large archive
 * (hundreds of thousands of rows for a page). Capped probes of the block-time index
 * decide instead: a window of fewer than probeCap rows is read whole through that
 * index and sorted (SMALL_WINDOW, O(window)); a wider one is walked by slot when fewer
 * than probeCap events are newer than it (SLOT_WALK, O(newer + page): open-ended and
 * recent windows), else read whole and sorted (WIDE_WINDOW, O(window)). Only the cost
 * depends on the choice: every branch has the same conditions and order, so pages stay
 * exact when block time goes backwards between slots.
 */
function windowPlan(db: Db, time: TimeRange, limit: number): RawBuilder<number> {
  const probe = (cond: (eb: ExpressionBuilder<Database, 'events'>) => Expression<SqlBool>) => db.selectFrom('events')
    .select('block_time').where(cond).orderBy('block_time', 'desc').orderBy('seq', 'desc').limit(sql.lit(limit));
  const cap = sql.lit(limit);
  const small = sql<boolean>`(SELECT count(*) FROM (${probe(conditions({ time }))}) w) < ${cap}`;
  const wide = time.to === undefined
    ? sql.lit(SLOT_WALK)
    : sql`CASE WHEN (SELECT count(*) FROM (${probe((eb) => eb('block_time', '>', String(time.to)))}) n) < ${cap} THEN ${sql.lit(SLOT_WALK)} ELSE ${sql.lit(WIDE_WINDOW)} END`;
  // CASE runs the second probe only when the first finds the window wide
  return sql<number>`CASE WHEN ${small} THEN ${sql.lit(SMALL_WINDOW)} ELSE ${wide} END`;
}

/**
 * The page's rows (with seq), unordered: one SELECT … ORDER BY slot DESC, seq DESC LIMIT
 * OFFSET, or for a time window windowPlan's ways as branches of a UNION ALL, each gated
 * on the plan above its LIMIT (a one-time filter: the other branches never start, not
 * even the parallel workers a plan may give them). The small window's branch reads at
 * most probeCap rows in block-time order, which forces the block-time index and never
 * truncates the window (it has fewer rows, seen in the same snapshot); `slot + 0` keeps
 * the wide window's sort off the slot index, and `block_time + 0` keeps the slot walk off
 * the block-time index, whatever a generic plan estimates. An open-ended window is never
 * WIDE_WINDOW, so it has no such branch.
 */
function pageRows(db: Db, where: EventWhere, page: Page): AliasedSelectQueryBuilder<PageRow, 't'> {
  const matching = () => db.selectFrom('events').select([...COLUMNS, 'seq']);
  if (where.time === undefined || !hasTimeRange(where.time)) {
    return matching().where(conditions(where)).orderBy('slot', 'desc').orderBy('seq', 'desc').limit(page.limit).offset(page.offset).as('t');
  }
  const { time, ...rest } = where;
  const gate = (how: number) => sql<SqlBool>`(SELECT how FROM plan) = ${sql.lit(how)}`;
  const cap = probeCap(page);
  const inWindow = matching().where(conditions(where)).orderBy('block_time', 'desc').orderBy('seq', 'desc').limit(sql.lit(cap));
  const smallWindow = db.selectFrom(inWindow.as('w')).selectAll()
    .orderBy('slot', 'desc').orderBy('seq', 'desc').limit(page.limit).offset(page.offset);
  const slotWalk = matching().where(conditions(rest)).where((eb) => eb.and([
    ...(time.from !== undefined ? [eb(sql`block_time + 0`, '>=', String(time.from))] : []),
    ...(time.to !== undefined ? [eb(sql`block_time + 0`, '<=', String(time.to))] : []),
  ])).orderBy('slot', 'desc').orderBy('seq', 'desc').limit(page.limit).offset(page.offset);
  const branches = db.with((cte) => cte('plan').materialized(), (qb) => qb.selectNoFrom(windowPlan(db, time, cap).as('how')))
    .selectFrom(smallWindow.as('b1')).selectAll().where(gate(SMALL_WINDOW))
    .unionAll((qb) => qb.selectFrom(slotWalk.as('b2')).selectAll().where(gate(SLOT_WALK)));
  if (time.to === undefined) return branches.as('t');
  const wideWindow = matching().where(conditions(where))
    .orderBy(sql`slot + 0`, 'desc').orderBy('seq', 'desc').limit(page.limit).offset(page.offset);
  return branches.unionAll((qb) => qb.selectFrom(wideWindow.as('b3')).selectAll().where(gate(WIDE_WINDOW))).as('t');
}

/**
 * A page of events as one JSON array text rendered by Postgres (`[]` when empty), in the
 * API's shape (toApiEvent: camelCase envelope, block time also as ISO 8601), so the API
 * node writes it to the socket without parsing or serializing it; `data` is the stored
 * jsonb as Postgres prints it. Unexecuted: the bench hands its SQL to pgbench.
 */
export function eventsQuery(db: Db, where: EventWhere, page: Page) {
  return db.selectFrom(pageRows(db, where, page)).select(sql<string>`coalesce('[' || string_agg((SELECT row_to_json(e) FROM (SELECT t.id, t.name, t.signature,
    t.slot, t.block_time AS "blockTime", to_char(to_timestamp(t.block_time) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp,
    t.ix_path AS "ixPath", t.event_index AS index, t.data) e)::text, ',' ORDER BY t.slot DESC, t.seq DESC) || ']', '[]')`.as('json'));
}

/** A page of events, newest first, as the JSON array text of the API's events. */
export async function listEventsJson(db: Db, where: EventWhere, page: Page): Promise<JsonText> {
  // a time window's plan computes from the page (probeCap) and fields go into one JSON
  // parameter: those compile per request; in the other modes every other value is a
  // parameter. The name is a literal, so a shape per name (a bounded set, the catalog's):
  // the read pool's statements are prepared, and a generic plan of `name = $1` assumes
  // each name holds an even share of the archive, so for a rare name it walks the slot
  // index and filters (every event of the archive read for an empty page) where the
  // name's own statistics lead to events_name_slot_idx.
  const shaped = (where.time === undefined || !hasTimeRange(where.time)) && where.fields === undefined;
  const { name, ...valued } = where;
  const q = shaped
    ? compileShaped(`events:${name ?? ''}`, { where: valued, page }, (a) => eventsQuery(db, { ...a.where, ...(name !== undefined ? { name } : {}) }, a.page))
    : eventsQuery(db, where, page).compile();
  return (await queryCell(db, q)) ?? '[]';
}

/** A page of events, newest first, as objects (for code that reads them). */
export async function listEvents(db: Db, where: EventWhere, page: Page): Promise<ApiEvent[]> {
  const rows = await db.selectFrom(pageRows(db, where, page)).select(COLUMNS)
    .orderBy('slot', 'desc').orderBy('seq', 'desc').execute();
  return rows.map(toApiEvent);
}

export async function countEvents(db: Db, where: EventWhere): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where(conditions(where))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The event of a transaction signature. A transaction may emit several events; SPEC
 * answers one object, so it is the first in log order (the lowest index).
 */
export async function findBySignature(db: Db, signature: string): Promise<ApiEvent | undefined> {
  const row = await db
    .selectFrom('events')
    .select(COLUMNS)
    .where('signature', '=', signature)
    .orderBy('event_index', 'asc')
    .limit(1)
    .executeTakeFirst();
  return row ? toApiEvent(row) : undefined;
}

/**
 * Distinct names in the archive, alphabetically. A loose index scan over the
 * (name, slot, seq) index: one probe per distinct name instead of reading every row.
 */
export async function distinctNames(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    WITH RECURSIVE n(name) AS (
      (SELECT name FROM events ORDER BY name LIMIT 1)
      UNION ALL
      SELECT (SELECT e.name FROM events e WHERE e.name > n.name ORDER BY e.name LIMIT 1)
      FROM n WHERE n.name IS NOT NULL
    )
    SELECT name FROM n WHERE name IS NOT NULL`.execute(db);
  return rows.map((r) => r.name);
}
