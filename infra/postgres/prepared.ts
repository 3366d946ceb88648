/**
 * A hot path's fixed statements as prepared statements on a Db's own pool. A statement run
 * thousands of times a second with one text (the x402 ledgers' grouped INSERTs) is parsed
 * once per connection and then only bound and executed: Postgres skips parsing it and, after
 * a few runs, planning it (its plan cache), and the API skips kysely's connection layers and
 * pg's Parse message. The statement's name is fixed by its caller and unique to its text (pg
 * refuses a name prepared on a connection with another text). A Db built elsewhere than
 * createDb (none in the service) runs the text unnamed through kysely, with the same result.
 * Behind a pooler in transaction mode, prepared statements need its support for them (the read
 * pool's named statements, named-statements.ts, do too).
 */
import { CompiledQuery } from 'kysely';
import type pg from './pg.js';

interface Executes { executeQuery<R>(q: CompiledQuery<R>): Promise<{ rows: R[] }> }

const pools = new WeakMap<object, pg.Pool>();

/** Called by createDb: `db`'s statements may run on `pool` directly. */
export function registerPool(db: object, pool: pg.Pool): void {
  pools.set(db, pool);
}

/**
 * A statement of the caller's, prepared once per connection under `name`. Without a name it is
 * parsed and planned on each run: for a statement whose best plan depends on the table's size
 * (a generic plan made while a table is small scans it whole once it is not)
 */
export interface PreparedStatement { name?: string; text: string }

export async function runPrepared<R extends object>(db: Executes, s: PreparedStatement, values: readonly unknown[]): Promise<R[]> {
  const pool = pools.get(db);
  if (pool === undefined) return (await db.executeQuery(CompiledQuery.raw(s.text, [...values]))).rows as R[];
  return (await pool.query<R>(s.name === undefined ? { text: s.text, values: [...values] } : { name: s.name, text: s.text, values: [...values] })).rows;
}

/**
 * A Postgres array literal of `values` (text; null is NULL), sent as one text parameter of an
 * array type (`$1::text[]`). The same value pg's own array encoding gives, built in one pass:
 * a hot path's grouped INSERT sends some ten arrays of a few dozen elements a statement, and
 * pg's encoding prepared and escaped every element on its own (the x402 bench's profile).
 */
export function arrayLiteral(values: readonly (string | null | undefined)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) { out += 'NULL'; continue; }
    out += '"';
    out += v.includes('"') || v.includes('\\') ? v.replace(/["\\]/g, '\\$&') : v;
    out += '"';
  }
  return out + '}';
}

/** One column of `rows` as an array literal: `columnOf(rows)((r) => r.field)`, for a grouped INSERT's unnest. */
export function columnOf<T>(rows: readonly T[]): (field: (row: T) => string | null | undefined) => string {
  return (field) => arrayLiteral(rows.map(field));
}
