/**
 * Postgres through kysely and pg. The pool is declared here, narrowly: callers get a
 * Kysely handle and close it; nothing else touches pg directly.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from './pg.js';
import Cursor from 'pg-cursor';
import type { Database } from './schema.js';
import { StatementNames, withNamedStatements } from './named-statements.js';
import { registerDirect } from './text-query.js';
import { createBytePages } from './byte-pages.js';
import { withCopy } from './copy.js';
import { registerPool } from './prepared.js';

export type Db = Kysely<Database>;

export function createDb(url: string, poolMax = 10, applicationName = 'tributary', opts: { statementTimeoutMs?: number; namedStatements?: boolean } = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    application_name: applicationName,
    // the read pool's bound on one query (a costly page cannot hold a connection for long); 0 = none
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // A dropped server connection is reported on the pool; without a listener it would crash the process.
  pool.on('error', () => undefined);
  // A checked-out client whose server goes away (a Postgres restart) emits 'error' too; its
  // query in flight rejects and the pool discards it, so the event needs no more than this.
  pool.on('connect', (client) => { client.on('error', () => undefined); });
  // cursor: .stream() reads large results in chunks (the merchant exports)
  // named statements: parsed once per connection, planned from the plan cache (named-statements.ts)
  // copy: the projections' COPY runs on a transaction's connection (copy.ts)
  // text-query: the hot list routes' one-cell pages as bytes, on connections of their own
  // (byte-pages.ts: up to poolMax more), closed with the pool
  // prepared: a hot path's fixed statements run on the pool directly (prepared.ts)
  if (!opts.namedStatements) {
    const plain = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withCopy(pool), cursor: Cursor }) });
    registerPool(plain, pool);
    return plain;
  }
  const names = new StatementNames();
  const pages = createBytePages(url, poolMax, applicationName, opts.statementTimeoutMs);
  const named = withNamedStatements(pool, names);
  const closing = { connect: () => named.connect(), end: async () => { await Promise.all([named.end(), pages.end()]); } };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withCopy(closing), cursor: Cursor }) });
  registerDirect(db, pool, pages, names);
  registerPool(db, pool);
  return db;
}

/** Creates the database named in `url` when it does not exist (connecting to `postgres`). */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (name === '') throw new Error('DATABASE_URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return true;
  } catch (err) {
    // Two processes migrating at once: the loser sees duplicate_database, which is fine.
    if ((err as { code?: string }).code === '42P04') return false;
    throw err;
  } finally {
    await client.end();
  }
}
