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
import pg from './pg.js';

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
  const client = await pool.connect();
  try {
    const r = await client.query<R>(s.name === undefined ? { text: s.text, values: [...values] } : { name: s.name, text: s.text, values: [...values] });
    client.release();
    return r.rows;
  } catch (err) {
    // as pool.query does: a connection whose statement failed is not reused
    client.release(err as Error);
    throw inDoubtOn(err, (client as unknown as { processID?: number | null }).processID);
  }
}

/**
 * A statement whose connection failed before its answer (no SQLSTATE: the socket closed, reset,
 * timed out) may still run to its commit: its backend only finds its client gone when it sends
 * the answer, after committing. Such an error carries the backend's process id, so that whoever
 * takes the statement's effect back first waits for that backend to be done (backendsDone).
 * A statement Postgres answered with an error (a DatabaseError with its SQLSTATE, a restart's
 * termination included) was rolled back: nothing in doubt.
 */
const IN_DOUBT = Symbol('backends in doubt');

function inDoubtOn(err: unknown, pid: number | null | undefined): unknown {
  // only an error Postgres itself answered (a SQLSTATE) says the statement ended; a socket's error
  // carries a string code too (ECONNRESET, EPIPE, ETIMEDOUT), and is exactly the one in doubt
  if (typeof err !== 'object' || err === null || err instanceof pg.DatabaseError) return err;
  if (typeof pid === 'number') withBackendsInDoubt(err, [pid]);
  return err;
}

/** The backends (process ids) that may still commit what `err`'s statements asked; none when nothing is in doubt. */
export function backendsInDoubt(err: unknown): readonly number[] {
  return typeof err === 'object' && err !== null ? ((err as { [IN_DOUBT]?: number[] })[IN_DOUBT] ?? []) : [];
}

/** `err` carries `pids` besides its own backends in doubt (a group's statement that failed before a row's own). */
export function withBackendsInDoubt<E>(err: E, pids: readonly number[]): E {
  if (typeof err !== 'object' || err === null || pids.length === 0) return err;
  const e = err as { [IN_DOUBT]?: number[] };
  e[IN_DOUBT] = [...new Set([...(e[IN_DOUBT] ?? []), ...pids])];
  return err;
}

/**
 * Resolves once none of `pids` runs a statement any more (pg_stat_activity: not active), else
 * throws, to be tried again: a statement whose connection was lost commits or rolls back before
 * its backend is idle or gone. A process id reused since by another role's backend is not seen
 * (its state is hidden), by an idle one is not waited for. Behind a pooler the id is the
 * pooler's own, which pg_stat_activity does not know: there, nothing is waited for.
 */
export async function backendsDone(db: Executes, pids: readonly number[]): Promise<void> {
  if (pids.length === 0) return;
  const r = await runPrepared<{ n: string }>(db, BACKENDS_ACTIVE, [pids.map(String)]);
  if (Number(r[0]?.n ?? 0) > 0) throw new Error(`backends ${pids.join(', ')} may still commit a statement whose answer was lost`);
}

const BACKENDS_ACTIVE = { text: `SELECT count(*)::text AS n FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND state = 'active'` };

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
