/**
 * Migration 1009 on endpoints created before URLs were kept as parsed: each raw URL becomes
 * its parsed form, unless another endpoint of the same gateway already holds that form (both
 * stay, each with its own secret), and a URL that does not parse is left alone.
 */
import { expect } from 'chai';
import type { Kysely } from 'kysely';
import * as m1009 from '../../infra/migrations/1009_webhook_endpoint_urls.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

describe('migration 1009: webhook endpoint URLs created before they were kept as parsed', () => {
  let env: TestEnv;
  let db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations take Kysely<any>
  const row = (gateway: string, url: string) => ({
    gateway_pubkey: gateway, gateway_account: `${gateway}-account`, endpoint_url: url, secret: 'plain:c2VjcmV0', created_at: new Date(), updated_at: new Date(),
  });

  before(async () => {
    env = await createTestEnv('webhook-url-migration');
    db = env.db;
  });
  after(async () => { await env.close(); });

  it('rewrites raw URLs to their parsed form, keeping both of two spellings of one endpoint', async () => {
    await db.insertInto('webhooks').values([
      row('gw-a', 'HTTP://127.0.0.1:80/hook/../in'),
      row('gw-a', 'http://127.0.0.1/in'),
      row('gw-b', 'https://Shop.Example/ho\tok'),
      row('gw-b', 'HTTPS://SHOP.EXAMPLE:443/other'),
      row('gw-c', 'HTTP://127.0.0.1:80/hook/../in'),
      row('gw-c', 'not a url'),
    ]).execute();
    await m1009.up(db);
    const rows = await db.selectFrom('webhooks').select(['gateway_pubkey', 'endpoint_url']).orderBy('id').execute();
    expect(rows).to.deep.equal([
      { gateway_pubkey: 'gw-a', endpoint_url: 'HTTP://127.0.0.1:80/hook/../in' },
      { gateway_pubkey: 'gw-a', endpoint_url: 'http://127.0.0.1/in' },
      { gateway_pubkey: 'gw-b', endpoint_url: 'https://shop.example/hook' },
      { gateway_pubkey: 'gw-b', endpoint_url: 'https://shop.example/other' },
      { gateway_pubkey: 'gw-c', endpoint_url: 'http://127.0.0.1/in' },
      { gateway_pubkey: 'gw-c', endpoint_url: 'not a url' },
    ]);
    // run again: nothing left to rewrite
    await m1009.up(db);
    expect(await db.selectFrom('webhooks').select(['gateway_pubkey', 'endpoint_url']).orderBy('id').execute()).to.deep.equal(rows);
  });
});
