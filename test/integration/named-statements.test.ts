/**
 * The read pool's named statements (infra/postgres/named-statements.ts): a query text is
 * prepared once per connection and reused with other parameters; a table replaced under
 * a prepared statement (a replay's swap) is read afresh, not through a stale plan.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

describe('named statements of the read pool', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let db: Db;
  before(async () => {
    env = await createTestEnv('named_statements');
    db = env.oneConnection({ namedStatements: true });
  });
  after(() => env?.close());

  it('prepares a text once and binds each call\'s parameters', async () => {
    const twice = async (n: number) => (await sql<{ n: number }>`SELECT ${n}::int + 1 AS n`.execute(db)).rows[0]!.n;
    expect(await twice(1)).to.equal(2);
    expect(await twice(41)).to.equal(42);
    const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::int + 1%'`.execute(db);
    expect(rows).to.have.length(1);
  });

  it('reads a table swapped under its statement', async () => {
    await sql`CREATE TABLE swap_me (v text)`.execute(env.db);
    await sql`INSERT INTO swap_me VALUES ('old')`.execute(env.db);
    const read = async () => (await db.selectFrom('swap_me' as never).select(sql<string>`v`.as('v')).where(sql<boolean>`${1} = 1`).execute()).map((r) => r.v);
    for (let i = 0; i < 7; i += 1) expect(await read()).to.deep.equal(['old']);
    await sql`CREATE TABLE swap_new (v text)`.execute(env.db);
    await sql`INSERT INTO swap_new VALUES ('new')`.execute(env.db);
    await sql`BEGIN; ALTER TABLE swap_me RENAME TO swap_gone; ALTER TABLE swap_new RENAME TO swap_me; COMMIT`.execute(env.db);
    expect(await read()).to.deep.equal(['new']);
  });
});
