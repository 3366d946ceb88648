/**
 * Set-based writes for projections: a batch's rows as one array per column, unnested in
 * the server (`INSERT ... SELECT * FROM unnest($1::text[], $2::bigint[], ...)`). One
 * statement of a few parameters whatever the batch size, where a multi-row VALUES list
 * has rows × columns parameters for the server to parse and bind and the client to
 * compile: the cost that kept the projections far below Postgres's own insert rate.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Trx } from './projection.js';

/** A column written by a bulk insert and its Postgres type (the array's element type). */
export type BulkColumn = readonly [name: string, type: string];

/** Rows past this many go in further statements: bounds the size of one message. */
const MAX_ROWS = 20_000;

function arrays(columns: readonly BulkColumn[], rows: readonly object[]): unknown[][] {
  const out = columns.map(() => new Array<unknown>(rows.length));
  rows.forEach((r, i) => {
    columns.forEach(([name], c) => {
      const v = (r as Record<string, unknown>)[name];
      out[c]![i] = v === undefined ? null : v;
    });
  });
  return out;
}

/** `SELECT * FROM unnest(...)` of these rows, as the source of an INSERT. */
export function unnestRows(columns: readonly BulkColumn[], rows: readonly object[]): RawBuilder<unknown> {
  const cols = arrays(columns, rows);
  return sql`SELECT * FROM unnest(${sql.join(columns.map(([, type], i) => sql`${cols[i]}::${sql.raw(type)}[]`))})`;
}

/**
 * INSERT of `rows` into `table` from server-side arrays, `tail` appended (ON CONFLICT ...).
 * Returns the number of rows inserted or updated.
 */
export async function bulkInsert(
  trx: Trx, table: string, columns: readonly BulkColumn[], rows: readonly object[], tail: RawBuilder<unknown> = sql``,
): Promise<number> {
  let changed = 0;
  for (let i = 0; i < rows.length; i += MAX_ROWS) {
    const part = rows.slice(i, i + MAX_ROWS);
    const r = await sql`INSERT INTO ${sql.table(table)} (${sql.join(columns.map(([name]) => sql.ref(name)))})
      ${unnestRows(columns, part)} ${tail}`.execute(trx);
    changed += Number(r.numAffectedRows ?? 0);
  }
  return changed;
}
