/**
 * The hot list routes' one-cell queries (a page rendered by Postgres as one JSON text),
 * run on the read pool itself rather than through kysely's executor: the route compiles
 * its kysely query and hands the SQL here, which runs it as the named statement kysely's
 * path would use (named-statements.ts, the same names), as an array row, and returns the
 * cell. What that leaves out per request is kysely's connection provider and driver
 * layers (acquire, the client wrapper, release, the result's row objects): a few percent
 * of an API process's CPU on the read mix. A Db made without named statements (a test's,
 * a CLI's) runs the query through kysely, with the same answer.
 */
import type { CompiledQuery } from 'kysely';
import type pg from './pg.js';
import type { StatementNames } from './named-statements.js';

/** What text-query needs of a Db's pool: registered by createDb for pools with named statements. */
interface Direct { pool: pg.Pool; names: StatementNames }

const direct = new WeakMap<object, Direct>();

export function registerDirect(db: object, pool: pg.Pool, names: StatementNames): void {
  direct.set(db, { pool, names });
}

/** A Db's executor, for the fallback (kysely's interface, so that nothing here imports the schema). */
interface Executes { executeQuery<R>(q: CompiledQuery<R>): Promise<{ rows: R[] }> }

/** The first column of the query's first row, as Postgres rendered it; undefined when it has no row. */
export async function queryCell(db: Executes, q: CompiledQuery): Promise<string | undefined> {
  const d = direct.get(db);
  if (d === undefined) {
    const { rows } = await db.executeQuery<Record<string, unknown>>(q);
    const first = rows[0];
    return first === undefined ? undefined : String(Object.values(first)[0]);
  }
  const name = d.names.of(q.sql);
  const values = [...q.parameters];
  // a text column: pg hands it over as the string Postgres sent (int8 and numeric too, pg.ts)
  const r = await d.pool.query<[string]>(name === undefined ? { text: q.sql, values, rowMode: 'array' } : { name, text: q.sql, values, rowMode: 'array' });
  return r.rows[0]?.[0];
}
