/**
 * The hot list routes' one-cell queries (a page rendered by Postgres as one JSON text),
 * run on the read pool's own connections rather than through kysely's executor: the route
 * compiles its kysely query and hands the SQL here, which runs it as a named statement and
 * returns the cell as the bytes Postgres sent (byte-pages.ts), which the API writes to the
 * socket as they are. What that leaves out per request is kysely's connection provider and
 * driver layers and pg's decode of the page into a string (and the encode back). A Db made
 * without named statements (a test's, a CLI's), or a query with a parameter byte-pages.ts
 * does not spell, runs through pg, with the same answer as text.
 */
import type { CompiledQuery } from 'kysely';
import type pg from './pg.js';
import type { StatementNames } from './named-statements.js';
import { textParams, type BytePages } from './byte-pages.js';

/** JSON text: as bytes off the wire, or as a string. */
export type JsonText = string | Buffer;

/** What text-query needs of a Db's pool: registered by createDb for pools with named statements. */
interface Direct { pool: pg.Pool; pages: BytePages; names: StatementNames }

const direct = new WeakMap<object, Direct>();

export function registerDirect(db: object, pool: pg.Pool, pages: BytePages, names: StatementNames): void {
  direct.set(db, { pool, pages, names });
}

/** A Db's executor, for the fallback (kysely's interface, so that nothing here imports the schema). */
interface Executes { executeQuery<R>(q: CompiledQuery<R>): Promise<{ rows: R[] }> }

/** The first column of the query's first row, as Postgres rendered it; undefined when it has no row. */
export async function queryCell(db: Executes, q: CompiledQuery): Promise<JsonText | undefined> {
  const d = direct.get(db);
  if (d === undefined) {
    const { rows } = await db.executeQuery<Record<string, unknown>>(q);
    const first = rows[0];
    return first === undefined ? undefined : String(Object.values(first)[0]);
  }
  // a text past the names' bound runs unnamed on either path
  const name = d.names.of(q.sql);
  const params = textParams(q.parameters);
  if (params !== undefined) return d.pages.cell(q.sql, params, name !== undefined);
  const values = [...q.parameters];
  // a text column: pg hands it over as the string Postgres sent (int8 and numeric too, pg.ts)
  const r = await d.pool.query<[string]>(name === undefined ? { text: q.sql, values, rowMode: 'array' } : { name, text: q.sql, values, rowMode: 'array' });
  return r.rows[0]?.[0];
}
