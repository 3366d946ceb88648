/**
 * Set-based writes for projections: a batch's rows COPYed into a staging table (a
 * temporary table of the target's columns, private to the connection), then moved into
 * the target with one INSERT ... SELECT that carries the model's ON CONFLICT rule. Where
 * a multi-row VALUES list has rows × columns parameters for the client to compile and
 * the server to parse and bind, this is one COPY stream and one statement per batch.
 */
import { sql, type RawBuilder } from 'kysely';
import { copyLine, copyLinesInto, type CopyValue } from '../../infra/postgres/copy.js';
import type { Trx } from './projection.js';

const stagingOf = (table: string) => `stage_${table}`;

/**
 * The staging table of `table`, empty: created once per connection (ON COMMIT DELETE ROWS
 * empties it at each commit), truncated here as well for a second batch in one
 * transaction (a replay's pages).
 */
async function emptyStaging(trx: Trx, table: string, columns: readonly string[]): Promise<void> {
  const stage = sql.table(stagingOf(table));
  const cols = sql.join(columns.map((c) => sql.ref(c)));
  // no parameters: one simple-protocol round trip for both statements
  await sql`CREATE TEMP TABLE IF NOT EXISTS ${stage} ON COMMIT DELETE ROWS AS SELECT ${cols} FROM ${sql.table(table)} WITH NO DATA;
    TRUNCATE ${stage}`.execute(trx);
}

/** The rows of a batch as COPY values, computed as the COPY stream pulls them (so the server parses and writes one chunk while this process renders the next). */
export type RowValues<T> = (row: T) => readonly CopyValue[];

/** The rows of a batch as lines of COPY text (copy.ts copyLine's format), rendered as the stream pulls them. */
export type RowLine<T> = (row: T) => string;

function* lazily<T>(rows: readonly T[], line: RowLine<T>): Generator<string> {
  for (const r of rows) yield line(r);
}

const lineOf = <T>(values: RowValues<T>): RowLine<T> => (r) => copyLine(values(r));

const byColumns = (columns: readonly string[]): RowValues<object> =>
  (r) => columns.map((c) => (r as Record<string, CopyValue>)[c]);

async function stagedInsert<T>(
  trx: Trx, table: string, columns: readonly string[], rows: readonly T[], line: RowLine<T>, tail: RawBuilder<unknown>,
): Promise<number> {
  await emptyStaging(trx, table, columns);
  await copyLinesInto(trx, stagingOf(table), columns, lazily(rows, line));
  const cols = sql.join(columns.map((c) => sql.ref(c)));
  const r = await sql`INSERT INTO ${sql.table(table)} (${cols}) SELECT ${cols} FROM ${sql.table(stagingOf(table))} ${tail}`.execute(trx);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * INSERT of `rows` (objects with a property per column) into `table`, `tail` appended
 * (ON CONFLICT ...), in the order given. Returns the number of rows inserted or updated.
 */
export async function bulkInsert(
  trx: Trx, table: string, columns: readonly string[], rows: readonly object[], tail: RawBuilder<unknown> = sql``,
): Promise<number> {
  if (rows.length === 0) return 0;
  return stagedInsert(trx, table, columns, rows, lineOf(byColumns(columns)), tail);
}

const UNIQUE_VIOLATION = '23505';

/**
 * bulkInsert for rows that are almost always new (the archive's events, a model's rows
 * behind the dedup set): COPYed straight into `table` inside a savepoint, so the server
 * writes them once, in pages, with no staging table and no per-row conflict check. If
 * one of them exists already, the COPY fails as a whole on the unique index, the
 * savepoint undoes it, and the batch takes bulkInsert's path with its conflict rule: the
 * rows written are exactly what bulkInsert alone would have written. `values` renders a
 * row in `columns` order; it is called as the COPY stream is written (again on the
 * fallback), so it must be a pure function of the row.
 */
export async function bulkAppend<T>(
  trx: Trx, table: string, columns: readonly string[], rows: readonly T[], values: RowValues<T>, tail: RawBuilder<unknown>,
): Promise<number> {
  return bulkAppendLines(trx, table, columns, rows, lineOf(values), tail);
}

/** bulkAppend for a writer that renders its rows as COPY lines itself (`line`: pure, as `values` above). */
export async function bulkAppendLines<T>(
  trx: Trx, table: string, columns: readonly string[], rows: readonly T[], line: RowLine<T>, tail: RawBuilder<unknown>,
): Promise<number> {
  if (rows.length === 0) return 0;
  await sql`SAVEPOINT bulk_append`.execute(trx);
  try {
    await copyLinesInto(trx, table, columns, lazily(rows, line));
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    await sql`ROLLBACK TO SAVEPOINT bulk_append`.execute(trx);
    return stagedInsert(trx, table, columns, rows, line, tail);
  }
  await sql`RELEASE SAVEPOINT bulk_append`.execute(trx);
  return rows.length;
}
