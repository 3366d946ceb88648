/**
 * The projections' COPY (infra/postgres/copy.ts) runs on the transaction's own connection,
 * through nothing but kysely's documented pool interface: SQL text and parameters handed
 * to the client of the dialect's pool. A Db whose pool cannot run it fails at once with a
 * message that names the cause, rather than an odd error from Postgres or a COPY on some
 * other connection.
 */
import { expect } from 'chai';
import { Kysely, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from '../../infra/postgres/pg.js';
import { copyInto, withCopy } from '../../infra/postgres/copy.js';
import type { Database } from '../../infra/postgres/schema.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

const COLUMNS = ['id', 'note', 'data'] as const;
const ROWS = [
  [1, 'plain', Buffer.from([0, 1, 254])],
  [2, 'tab\there, newline\nthere, backslash \\ and \\N', null],
  [3, null, Buffer.alloc(0)],
] as const;

describe('COPY into a table inside a kysely transaction', () => {
  let env: TestEnv;
  let pool: pg.Pool;

  before(async () => {
    env = await createTestEnv('postgres-copy');
    await sql`CREATE TABLE copy_probe (id integer PRIMARY KEY, note text, data bytea)`.execute(env.db);
    pool = new pg.Pool({ connectionString: env.dbUrl, max: 2 });
  });
  after(async () => {
    // the bare Kysely below shares the pool without owning it
    await pool?.end();
    await env?.close();
  });
  beforeEach(async () => { await sql`TRUNCATE copy_probe`.execute(env.db); });

  const probe = (db: Kysely<Database>) => sql<{ id: number; note: string | null; data: Buffer | null }>`SELECT id, note, data FROM copy_probe ORDER BY id`.execute(db);

  it('writes every value as it was, seen by the transaction and kept by its commit', async () => {
    await env.db.transaction().execute(async (trx) => {
      await copyInto(trx, 'copy_probe', COLUMNS, ROWS);
      expect((await probe(trx)).rows, 'seen inside the transaction').to.have.length(3);
    });
    const rows = (await probe(env.db)).rows;
    expect(rows.map((r) => [r.id, r.note, r.data === null ? null : [...r.data]])).to.deep.equal([
      [1, 'plain', [0, 1, 254]], [2, ROWS[1][1], null], [3, null, []],
    ]);
  });

  it('writes rows spread over many chunks as they were: text of every UTF-8 length, a row longer than a chunk', async () => {
    const texts = ['plain', 'é ü', '✓ ünïcødé', '🚀 and 🧾', 'tab\tback\\slash'];
    const rows = Array.from({ length: 3000 }, (_, i) => [i, `${texts[i % texts.length]!.repeat(1 + (i % 40))} ${i}`, null] as const);
    const long = [3000, '✓🚀é'.repeat(150_000), null] as const;
    await env.db.transaction().execute((trx) => copyInto(trx, 'copy_probe', COLUMNS, [...rows, long, ...rows.map(([id, note]) => [id + 3001, note, null] as const)]));
    const back = new Map((await probe(env.db)).rows.map((r) => [r.id, r.note]));
    expect(back.size).to.equal(6001);
    for (const [id, note] of rows) {
      expect(back.get(id)).to.equal(note);
      expect(back.get(id + 3001)).to.equal(note);
    }
    expect(back.get(3000)).to.equal(long[1]);
  });

  it('goes with the transaction when it rolls back', async () => {
    const failed = await env.db.transaction().execute(async (trx) => {
      await copyInto(trx, 'copy_probe', COLUMNS, ROWS);
      throw new Error('roll back');
    }).catch((err: Error) => err.message);
    expect(failed).to.equal('roll back');
    expect((await probe(env.db)).rows).to.deep.equal([]);
  });

  it('fails the transaction on a bad row, and the connection serves the next one', async () => {
    const failed = await env.db.transaction().execute((trx) => copyInto(trx, 'copy_probe', COLUMNS, [[1, 'a', null], [1, 'duplicate', null]]))
      .catch((err: Error) => err.message);
    expect(failed).to.match(/duplicate key/);
    await env.db.transaction().execute((trx) => copyInto(trx, 'copy_probe', COLUMNS, [[4, 'after', null]]));
    expect((await probe(env.db)).rows.map((r) => r.id)).to.deep.equal([4]);
  });

  it('hands kysely\'s pool client SQL text and parameters only, as kysely documents the interface', async () => {
    const seen: unknown[] = [];
    const copying = withCopy(pool);
    // what kysely calls, recorded, in front of the pool createDb builds
    const recording: PostgresPool = {
      async connect() {
        const client = await copying.connect();
        return {
          query: ((q: string, parameters: readonly unknown[]) => {
            seen.push(q);
            return client.query(q, parameters);
          }) as PostgresPoolClient['query'],
          release: () => client.release(),
        };
      },
      end: async () => undefined,
    };
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: recording }) });
    await db.transaction().execute((trx) => copyInto(trx, 'copy_probe', COLUMNS, ROWS));
    expect(seen.filter((q) => typeof q !== 'string'), 'a query object other than text').to.deep.equal([]);
    expect(seen).to.include('COPY "copy_probe" ("id", "note", "data") FROM STDIN');
    expect((await probe(env.db)).rows.map((r) => r.id)).to.deep.equal([1, 2, 3]);
    await db.destroy();
  });

  it('fails at once, naming the cause, on a Db whose pool cannot run it', async () => {
    const bare = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const failed = await bare.transaction().execute((trx) => copyInto(trx, 'copy_probe', COLUMNS, ROWS)).then(() => 'copied', (err: Error) => err.message);
    expect(failed).to.match(/cannot run COPY requests; build it with createDb/);
    expect((await probe(env.db)).rows).to.deep.equal([]);
  });
});
