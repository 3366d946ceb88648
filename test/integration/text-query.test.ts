/**
 * The hot list routes' one-cell queries on the read pool (infra/postgres/text-query.ts):
 * the cell kysely's path answers, as its UTF-8 bytes, prepared once per connection;
 * parameters of every kind a query may bind (text, bytea, integers, jsonb, booleans,
 * timestamps) read by Postgres as pg sends them, one it does not spell (an array) run
 * through pg; no row and a NULL cell told apart from an empty page; and a Db without named
 * statements answered through kysely alike; many more queries in flight than connections
 * answered each with its own cell.
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
    db = env.oneConnection({ namedStatements: true });
    await sql`CREATE TABLE tq_docs (k bytea, name text, doc text)`.execute(env.db);
    await sql`INSERT INTO tq_docs VALUES ('\\x01', 'a', '{"n":1}'), ('\\x01', 'b', '{"n":2}'), ('\\x02', 'c', '{"n":"é ✓"}')`.execute(env.db);
  });
  after(() => env?.close());

  const page = (d: Db, k: Buffer, notName: string) => d.selectFrom(
    d.selectFrom('tq_docs' as never).select(sql<string>`doc`.as('doc')).select(sql<string>`name`.as('name'))
      .where(sql<boolean>`k = ${k}`).where(sql<boolean>`name <> ${notName}`).as('t'),
  ).select(sql<string>`coalesce('[' || string_agg(t.doc, ',' ORDER BY t.name) || ']', '[]')`.as('json'));

  it('answers the cell kysely\'s path answers, for each parameter value', async () => {
    for (const [k, not] of [[Buffer.from([1]), 'x'], [Buffer.from([1]), 'a'], [Buffer.from([2]), 'x'], [Buffer.from([3]), 'x']] as const) {
      const viaKysely = (await page(db, k, not).executeTakeFirstOrThrow()).json;
      expect(await queryCell(db, page(db, k, not).compile())).to.deep.equal(Buffer.from(viaKysely, 'utf8'));
    }
    expect(await queryCell(db, page(db, Buffer.from([2]), 'x').compile())).to.deep.equal(Buffer.from('[{"n":"é ✓"}]', 'utf8'));
    expect(await queryCell(db, page(db, Buffer.from([3]), 'x').compile())).to.deep.equal(Buffer.from('[]'));
  });

  it('binds every kind of parameter as pg does, and runs a query with an array through pg', async () => {
    const cell = (q: ReturnType<typeof sql<string>>) => queryCell(db, db.selectNoFrom(q.as('v')).compile());
    const js = '{"a": [1, "x"]}';
    expect(String(await cell(sql<string>`(${js}::jsonb)::text`))).to.equal('{"a": [1, "x"]}');
    expect(String(await cell(sql<string>`(${js}::jsonb @> ${'{"a":["x"]}'}::jsonb)::text`))).to.equal('true');
    expect(String(await cell(sql<string>`(${false}::boolean)::text || ${true}::boolean::text`))).to.equal('falsetrue');
    expect(String(await cell(sql<string>`(${'2024-01-02 03:04:05+00'}::timestamptz AT TIME ZONE 'UTC')::text`))).to.equal('2024-01-02 03:04:05');
    expect(String(await cell(sql<string>`(${'9007199254740993'}::int8 + ${1})::text`))).to.equal('9007199254740994');
    expect(String(await cell(sql<string>`encode(${Buffer.from([0, 255])}::bytea, 'hex')`))).to.equal('00ff');
    expect(String(await cell(sql<string>`array_to_string(${['p', 'q']}::text[], ',')`))).to.equal('p,q');
  });

  it('prepares each text once per connection', async () => {
    const text = page(db, Buffer.from([1]), 'x').compile().sql;
    for (const not of ['a', 'b', 'c']) await queryCell(db, page(db, Buffer.from([1]), not).compile());
    // the pages' pool has one connection; pg_prepared_statements shows a session's own
    const n = await queryCell(db, db.selectNoFrom(sql<string>`(SELECT count(*) FROM pg_prepared_statements WHERE statement = ${text})::text`.as('n')).compile());
    expect(String(n)).to.equal('1');
  });

  it('tells no row from a cell, and answers alike on a Db without named statements', async () => {
    const none = db.selectFrom('tq_docs' as never).select(sql<string>`doc`.as('doc')).where(sql<boolean>`name = ${'zz'}`);
    expect(await queryCell(db, none.compile())).to.equal(undefined);
    expect(await queryCell(db, db.selectNoFrom(sql<string>`NULL::text`.as('n')).compile())).to.equal(undefined);
    expect(await queryCell(env.db, page(env.db, Buffer.from([1]), 'x').compile())).to.equal('[{"n":1},{"n":2}]');
    expect(await queryCell(env.db, none.compile())).to.equal(undefined);
  });

  it('answers many more queries in flight than it has connections, each with its own cell', async () => {
    // a queue per connection of one sent ahead at most (byte-pages.ts): the rest wait their turn
    const two = createDb(env.dbUrl, 2, 'text-query-queue', { namedStatements: true });
    try {
      const q = (i: number) => two.selectNoFrom(sql<string>`(${String(i)}::int * 2)::text`.as('v')).compile();
      for (let round = 0; round < 3; round++) {
        const cells = await Promise.all(Array.from({ length: 200 }, (_, i) => queryCell(two, q(i))));
        expect(cells.map(String)).to.deep.equal(Array.from({ length: 200 }, (_, i) => String(i * 2)));
      }
    } finally {
      await two.destroy();
    }
  });

  it('holds the read pool\'s statement timeout: a query past it fails as Postgres cancelled it', async () => {
    const bounded = createDb(env.dbUrl, 1, 'text-query-timeout', { namedStatements: true, statementTimeoutMs: 100 });
    try {
      const code = await queryCell(bounded, bounded.selectNoFrom(sql<string>`pg_sleep(0.5)::text`.as('s')).compile())
        .then(() => 'none', (e: { code?: unknown }) => e.code);
      expect(code).to.equal('57014');
    } finally {
      await bounded.destroy();
    }
  });
});
