/**
 * Set-based writes for projections: a batch's rows COPYed into a staging table (a
 * temporary table of the target's columns, private to the connection), then moved into
 * the target with one INSERT ... SELECT that carries the model's ON CONFLICT rule. Where
 * a multi-row VALUES list has rows × columns parameters for the client to compile and
 * the server to parse and bind, this is one COPY stream and one statement per batch.
 */
import { sql, type RawBuilder } from 'kysely';
import { copyInto, type CopyValue } from '../../infra/postgres/copy.js';
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

/**
 * INSERT of `rows` (objects with a property per column) into `table`, `tail` appended
 * (ON CONFLICT ...), in the order given. Returns the number of rows inserted or updated.
 */
export async function bulkInsert(
  trx: Trx, table: string, columns: readonly string[], rows: readonly object[], tail: RawBuilder<unknown> = sql``,
): Promise<number> {
  if (rows.length === 0) return 0;
  await emptyStaging(trx, table, columns);
  await copyInto(trx, stagingOf(table), columns, valuesOf(rows, columns));
  const cols = sql.join(columns.map((c) => sql.ref(c)));
  const r = await sql`INSERT INTO ${sql.table(table)} (${cols}) SELECT ${cols} FROM ${sql.table(stagingOf(table))} ${tail}`.execute(trx);
  return Number(r.numAffectedRows ?? 0);
}

const valuesOf = (rows: readonly object[], columns: readonly string[]) =>
  rows.map((r) => columns.map((c) => (r as Record<string, CopyValue>)[c]));

const UNIQUE_VIOLATION = '23505';

/**
 * bulkInsert for rows that are almost always new (the archive's events, a model's rows
 * behind the dedup set): COPYed straight into `table` inside a savepoint, so the server
 * writes them once, in pages, with no staging table and no per-row conflict check. If
 * one of them exists already, the COPY fails as a whole on the unique index, the
 * savepoint undoes it, and the batch takes bulkInsert's path with its conflict rule: the
 * rows written are exactly what bulkInsert alone would have written.
 */
export async function bulkAppend(
  trx: Trx, table: string, columns: readonly string[], rows: readonly object[], tail: RawBuilder<unknown>,
): Promise<number> {
  if (rows.length === 0) return 0;
  await sql`SAVEPOINT bulk_append`.execute(trx);
  try {
    await copyInto(trx, table, columns, valuesOf(rows, columns));
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    await sql`ROLLBACK TO SAVEPOINT bulk_append`.execute(trx);
    return bulkInsert(trx, table, columns, rows, tail);
  }
  await sql`RELEASE SAVEPOINT bulk_append`.execute(trx);
  return rows.length;
}
