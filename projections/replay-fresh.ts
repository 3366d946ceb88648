/**
 * Replay into fresh tables: inside the replay's transaction the model is built in new
 * tables of the same columns, in a schema of its own put first on the transaction's
 * search path (so the projection's unqualified writes land there), with the indexes its
 * upserts and lookups need; those its tables name as never needed by apply in a replay
 * (`deferredIndexes`) are built once the rows are in (a sort per index instead of an
 * index insert per row), the tables analyzed, and the old tables
 * dropped and the new ones moved to their schema in the same transaction. Readers keep
 * the old tables, untouched, until the commit (they wait only for the swap's short
 * exclusive lock), then see the new ones; a replay that fails or dies leaves nothing
 * behind (every step is transactional). Nor does the old model's deletion write a dead
 * row per row: its files go at once.
 *
 * Taken only where it is safe (freshTablesSupported): tables with no foreign keys either
 * way, no user triggers, no views or rules on them, no sequences or identity columns.
 * Otherwise replay.ts empties the tables in place, as before.
 */
import { sql } from 'kysely';
import type { Trx } from './runner/projection.js';

interface TableInfo { name: string; schema: string; deferredIndexes: readonly string[] }

/** The tables in their schemas, or undefined when one of them is not a plain table this module can rebuild. */
export async function freshTablesSupported(trx: Trx, tables: readonly { name: string; deferredIndexes?: readonly string[] }[]): Promise<TableInfo[] | undefined> {
  const out: TableInfo[] = [];
  for (const { name: t, deferredIndexes } of tables) {
    const r = await sql<{ schema: string; kind: string; blockers: string }>`
      SELECT n.nspname AS schema, c.relkind AS kind,
        (SELECT count(*) FROM pg_constraint k WHERE k.contype = 'f' AND (k.conrelid = c.oid OR k.confrelid = c.oid))
        + (SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT g.tgisinternal)
        + (SELECT count(*) FROM pg_depend d JOIN pg_rewrite w ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
           WHERE d.refobjid = c.oid AND w.ev_class <> c.oid)
        + (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
           AND (a.attidentity <> '' OR pg_get_serial_sequence(quote_ident(n.nspname) || '.' || quote_ident(c.relname), a.attname) IS NOT NULL))
        AS blockers
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.oid = to_regclass(${t})`.execute(trx);
    const row = r.rows[0];
    if (row === undefined || row.kind !== 'r' || Number(row.blockers) > 0) return undefined;
    out.push({ name: t, schema: row.schema, deferredIndexes: deferredIndexes ?? [] });
  }
  return out;
}

/** The schema a projection's fresh tables are built in (one per projection: replays of one model are serialized by its lock). */
export function freshSchema(projection: string): string {
  return `replay_${projection.toLowerCase().replace(/[^a-z0-9]/g, '_').slice(0, 48)}`;
}

interface IndexDef { name: string; def: string; constraint: string | null }

async function indexesOf(trx: Trx, t: TableInfo): Promise<IndexDef[]> {
  const r = await sql<IndexDef>`
    SELECT ic.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
      (SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x')) AS constraint
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
    WHERE i.indrelid = to_regclass(${`${quoteIdent(t.schema)}.${quoteIdent(t.name)}`})
    ORDER BY ic.relname`.execute(trx);
  return r.rows;
}

/**
 * Built after the rows: an index the table names as never needed by apply in a replay
 * (Projection.tables). A unique one then checks, as it is built, what it would have
 * checked row by row: a duplicate fails the replay, which leaves the old model.
 */
const deferred = (t: TableInfo, ix: IndexDef) => t.deferredIndexes.includes(ix.name);

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** An index's definition moved onto the fresh table (pg_get_indexdef: CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING ...). */
function onTable(def: string, schema: string, table: string): string {
  const moved = def.replace(/ ON (ONLY )?\S+ USING /, ` ON ${quoteIdent(schema)}.${quoteIdent(table)} USING `);
  if (moved === def) throw new Error(`cannot read the index definition ${def}`);
  return moved;
}

async function addIndex(trx: Trx, schema: string, t: TableInfo, ix: IndexDef): Promise<void> {
  const table = sql.raw(`${quoteIdent(schema)}.${quoteIdent(t.name)}`);
  if (ix.constraint !== null) {
    await sql`ALTER TABLE ${table} ADD CONSTRAINT ${sql.id(ix.name)} ${sql.raw(ix.constraint)}`.execute(trx);
  } else {
    await sql.raw(onTable(ix.def, schema, t.name)).execute(trx);
  }
}

/** Memory an index build of the fresh tables may sort in (Postgres's default is 64MB). */
const INDEX_MEMORY = '256MB';

export interface FreshTimings { prepareMs: number; buildMs: number; indexMs: number; swapMs: number }

/**
 * Runs `build` (which writes the model through unqualified names) against fresh tables
 * and swaps them in: see the module's comment. Returns build's result and the steps' times.
 */
export async function buildInFreshTables<T>(trx: Trx, projection: string, tables: readonly TableInfo[], build: () => Promise<T>): Promise<{ result: T; timings: FreshTimings }> {
  const schema = freshSchema(projection);
  const ms = () => performance.now();
  let at = ms();
  const indexes = new Map<string, IndexDef[]>();
  await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(trx);
  for (const t of tables) {
    await sql`CREATE TABLE ${sql.id(schema, t.name)} (LIKE ${sql.id(t.schema, t.name)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)`.execute(trx);
    const defs = await indexesOf(trx, t);
    indexes.set(t.name, defs);
    // every index but the deferred ones is there while the rows go in: apply's upserts and lookups use them
    for (const ix of defs.filter((d) => !deferred(t, d))) await addIndex(trx, schema, t, ix);
  }
  const path = await sql<{ p: string }>`SELECT current_setting('search_path') AS p`.execute(trx);
  await sql`SELECT set_config('search_path', ${`${quoteIdent(schema)}, ${path.rows[0]!.p}`}, true)`.execute(trx);
  const prepareMs = ms() - at;
  at = ms();
  const result = await build();
  const buildMs = ms() - at;
  at = ms();
  await sql`SELECT set_config('search_path', ${path.rows[0]!.p}, true)`.execute(trx);
  // each index is one sort of the whole table: sorted in memory where it fits
  await sql`SELECT set_config('maintenance_work_mem', ${INDEX_MEMORY}, true)`.execute(trx);
  for (const t of tables) {
    for (const ix of indexes.get(t.name)!.filter((d) => deferred(t, d))) await addIndex(trx, schema, t, ix);
    await sql`ANALYZE ${sql.id(schema, t.name)}`.execute(trx);
  }
  const indexMs = ms() - at;
  at = ms();
  for (const t of [...tables].reverse()) await sql`DROP TABLE ${sql.id(t.schema, t.name)}`.execute(trx);
  for (const t of tables) await sql`ALTER TABLE ${sql.id(schema, t.name)} SET SCHEMA ${sql.id(t.schema)}`.execute(trx);
  await sql`DROP SCHEMA ${sql.id(schema)}`.execute(trx);
  const swapMs = ms() - at;
  return { result, timings: { prepareMs, buildMs, indexMs, swapMs } };
}
