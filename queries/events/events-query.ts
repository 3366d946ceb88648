/**
 * Reads of the archive `events` table for the events API. Every list is newest first
 * (slot DESC, seq DESC: the order of the chain, then of arrival) and paginated. Filters on
 * event fields use jsonb containment (`data @> {...}`) so the GIN jsonb_path_ops index
 * answers them; the other conditions each have a btree index (migration 0001).
 */
import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Database } from '../../infra/postgres/schema.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { TimeRange } from './params.js';
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

function conditions(w: EventWhere) {
  return (eb: ExpressionBuilder<Database, 'events'>): Expression<SqlBool> => {
    const all: Expression<SqlBool>[] = [];
    if (w.name !== undefined) all.push(eb('name', '=', w.name));
    if (w.slot !== undefined) all.push(eb('slot', '=', String(w.slot)));
    if (w.minSlot !== undefined) all.push(eb('slot', '>=', String(w.minSlot)));
    if (w.maxSlot !== undefined) all.push(eb('slot', '<=', String(w.maxSlot)));
    if (w.memos !== undefined) all.push(eb('memo', 'in', [...w.memos]));
    if (w.time?.from !== undefined) all.push(eb('block_time', '>=', String(w.time.from)));
    if (w.time?.to !== undefined) all.push(eb('block_time', '<=', String(w.time.to)));
    if (w.fields !== undefined && Object.keys(w.fields).length > 0) {
      all.push(sql<SqlBool>`data @> ${JSON.stringify(w.fields)}::jsonb`);
    }
    return eb.and(all);
  };
}

/**
 * A page of events as one JSON array text rendered by Postgres (`[]` when empty), in the
 * API's shape (toApiEvent: camelCase envelope, block time also as ISO 8601), so the API
 * node writes it to the socket without parsing or serializing it; `data` is the stored
 * jsonb as Postgres prints it. Unexecuted: the bench hands its SQL to pgbench.
 */
export function eventsQuery(db: Db, where: EventWhere, page: Page) {
  const rows = db
    .selectFrom('events')
    .select([...COLUMNS, 'seq'])
    .where(conditions(where))
    .orderBy('slot', 'desc')
    .orderBy('seq', 'desc')
    .limit(page.limit)
    .offset(page.offset);
  return db.selectFrom(rows.as('t')).select(sql<string>`coalesce('[' || string_agg((SELECT row_to_json(e) FROM (SELECT t.id, t.name, t.signature,
    t.slot, t.block_time AS "blockTime", to_char(to_timestamp(t.block_time) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp,
    t.ix_path AS "ixPath", t.event_index AS index, t.data) e)::text, ',' ORDER BY t.slot DESC, t.seq DESC) || ']', '[]')`.as('json'));
}

/** A page of events, newest first, as the JSON array text of the API's events. */
export async function listEventsJson(db: Db, where: EventWhere, page: Page): Promise<string> {
  return (await eventsQuery(db, where, page).executeTakeFirstOrThrow()).json;
}

/** A page of events, newest first, as objects (for code that reads them). */
export async function listEvents(db: Db, where: EventWhere, page: Page): Promise<ApiEvent[]> {
  const rows = await db.selectFrom('events').select(COLUMNS).where(conditions(where))
    .orderBy('slot', 'desc').orderBy('seq', 'desc').limit(page.limit).offset(page.offset).execute();
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
