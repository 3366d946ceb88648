import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { arrayLiteral } from '../../infra/postgres/prepared.js';

describe('arrayLiteral: a text array sent as one parameter', () => {
  let env: TestEnv;
  before(async () => { env = await createTestEnv('array_literal'); });
  after(async () => { await env.close(); });

  it('reads back in Postgres as the same elements, whatever they hold', async () => {
    const cases: (string | null)[][] = [
      ['plain', 'with,comma', 'with"quote', 'back\\slash', 'both\\"', '', '[1,2)', ' spaced ', 'NULL', '{}', 'ünïcode'],
      [], [null], ['a', null, 'b'],
    ];
    for (const values of cases) {
      const r = await sql<{ a: (string | null)[] }>`SELECT ${arrayLiteral(values)}::text[] AS a`.execute(env.db);
      expect(r.rows[0]!.a).to.deep.equal(values);
    }
  });
});
