/**
 * The hot list routes' one-cell queries on the read pool (infra/postgres/text-query.ts):
 * the same cell as kysely's path, under the statement name kysely's path gives the same
 * text (one prepared statement per connection, whichever path ran it first), parameters
 * of every kind the routes bind (text, bytea), no row told apart from an empty page, and
 * a Db without named statements answered through kysely alike.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createDb, type Db } from '../../infra/postgres/database.js';
import { queryCell } from '../../infra/postgres/text-query.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

describe('text queries of the read pool', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let db: Db;
  before(async () => {
    env = await createTestEnv('text_query');
    db = createDb(env.dbUrl, 1, 'text-query-test', { namedStatements: true });
    await sql`CREATE TABLE tq_docs (k bytea, name text, doc text)`.execute(env.db);
    await sql`INSERT INTO tq_docs VALUES ('\\x01', 'a', '{"n":1}'), ('\\x01', 'b', '{"n":2}'), ('\\x02', 'c', '{"n":"é ✓"}')`.execute(env.db);
  });
  after(async () => {
    await db?.destroy();
    await env?.close();
  });

  const page = (d: Db, k: Buffer, notName: string) => d.selectFrom(
    d.selectFrom('tq_docs' as never).select(sql<string>`doc`.as('doc')).select(sql<string>`name`.as('name'))
      .where(sql<boolean>`k = ${k}`).where(sql<boolean>`name <> ${notName}`).as('t'),
  ).select(sql<string>`coalesce('[' || string_agg(t.doc, ',' ORDER BY t.name) || ']', '[]')`.as('json'));

  it('answers the cell kysely\'s path answers, for each parameter value', async () => {
    for (const [k, not] of [[Buffer.from([1]), 'x'], [Buffer.from([1]), 'a'], [Buffer.from([2]), 'x'], [Buffer.from([3]), 'x']] as const) {
      const viaKysely = (await page(db, k, not).executeTakeFirstOrThrow()).json;
      expect(await queryCell(db, page(db, k, not).compile())).to.equal(viaKysely);
    }
    expect(await queryCell(db, page(db, Buffer.from([2]), 'x').compile())).to.equal('[{"n":"é ✓"}]');
    expect(await queryCell(db, page(db, Buffer.from([3]), 'x').compile())).to.equal('[]');
  });

  it('shares its statement with kysely\'s path: one prepared statement per text on the connection', async () => {
    const text = page(db, Buffer.from([1]), 'x').compile().sql;
    await queryCell(db, page(db, Buffer.from([1]), 'a').compile());
    await page(db, Buffer.from([2]), 'a').execute();
    await queryCell(db, page(db, Buffer.from([1]), 'b').compile());
    // the pool has one connection: both paths ran on it
    const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_prepared_statements WHERE statement = ${text}`.execute(db);
    expect(rows[0]!.n).to.equal('1');
  });

  it('tells no row from a cell, and answers alike on a Db without named statements', async () => {
    const none = db.selectFrom('tq_docs' as never).select(sql<string>`doc`.as('doc')).where(sql<boolean>`name = ${'zz'}`);
    expect(await queryCell(db, none.compile())).to.equal(undefined);
    expect(await queryCell(env.db, page(env.db, Buffer.from([1]), 'x').compile())).to.equal('[{"n":1},{"n":2}]');
    expect(await queryCell(env.db, none.compile())).to.equal(undefined);
  });
});
