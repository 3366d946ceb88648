/**
 * Migration 1008 on a database registered before proofs of control: URLs are normalized
 * (two spellings of one URL by one gateway keep the first), the first-come lock on a URL
 * is gone, every row starts unlisted, and down() restores the old shape.
 */
import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import * as m1008 from '../../infra/migrations/1008_x402_origin_proofs.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

describe('migration 1008: x402 origin proofs on resources registered before them', () => {
  let env: TestEnv;
  // the migration's own view of the database: no app types
  let db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations take Kysely<any>
  const row = (gateway: string, resource: string) => ({
    gateway, resource, type: 'http', description: null, accepts: '[]', metadata: '{}', discoverable: true, updated_at: new Date(),
  });

  before(async () => {
    env = await createTestEnv('x402-discovery-migration');
    db = env.db;
  });
  after(async () => { await env.close(); });

  it('normalizes, unlocks and unlists the rows it finds, and goes down again', async () => {
    await m1008.down(db);
    await db.insertInto('x402_resources').values([
      row('gw-a', 'HTTPS://API.EXAMPLE/report?'), row('gw-a', 'https://api.example:443/report'), row('gw-b', 'https://Shop.Example/x'),
      row('gw-b', 'javascript:alert(1)//'),
    ]).execute();
    await m1008.up(db);
    const rows = await db.selectFrom('x402_resources').select(['gateway', 'resource', 'origin', 'listed']).orderBy('id').execute();
    expect(rows).to.deep.equal([
      { gateway: 'gw-a', resource: 'https://api.example/report', origin: 'https://api.example', listed: false },
      { gateway: 'gw-b', resource: 'https://shop.example/x', origin: 'https://shop.example', listed: false },
      { gateway: 'gw-b', resource: 'javascript:alert(1)//', origin: '', listed: false },
    ]);
    // another gateway may now register the same URL; only one row per URL may be listed
    await db.insertInto('x402_resources').values({ ...row('gw-b', 'https://api.example/report'), origin: 'https://api.example', listed: true }).execute();
    const twice = db.insertInto('x402_resources').values({ ...row('gw-c', 'https://api.example/report'), origin: 'https://api.example', listed: true }).execute();
    await twice.then(() => expect.fail('a second listed row of one URL was accepted'), (err: { code?: string }) => expect(err.code).to.equal('23505'));
    await m1008.down(db);
    const after = await db.selectFrom('x402_resources').select(['gateway', 'resource']).where('resource', '=', 'https://api.example/report').execute();
    expect(after).to.deep.equal([{ gateway: 'gw-b', resource: 'https://api.example/report' }]);
    expect((await sql<{ n: string }>`SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'x402_origin_proofs'`.execute(db)).rows[0]!.n).to.equal('0');
    await m1008.up(db);
  });
});
