/**
 * The pool sync worker: each venue's top pools replace its rows in `pools`; a failing
 * venue keeps its rows; one run per interval across all nodes; an API node runs it.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { startVenueStandIns, type VenueStandIns } from '../support/upstreams/venues.js';
import { key } from '../support/upstreams/fixtures.js';
import { loadConfig, type Config } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { poolSyncAttachment, startPoolSync, syncPoolsOnce } from '../../queries/pools/sync.js';
import { createVenueClients } from '../../queries/pools/venues.js';
import { registerHealthRoutes } from '../../queries/health/routes.js';

describe('pool sync worker', function () {
  let env: TestEnv;
  let venues: VenueStandIns;
  let config: Config;
  const logger = createLogger('silent', 'pools-sync');

  before(async () => {
    env = await createTestEnv('pools-sync');
    venues = await startVenueStandIns();
    config = loadConfig({ ...env.env, UPSTREAM_TIMEOUT_MS: '300', ...venues.env });
  });
  after(async () => {
    await venues.close();
    await env.close();
  });

  const rows = () => env.db.selectFrom('pools').select(['venue', 'address', 'symbol_x', 'symbol_y', 'tvl']).orderBy('tvl', 'desc').execute();
  const deps = (maxPerVenue: number) => ({ db: env.db, venues: createVenueClients(config, logger), maxPerVenue, logger, clock: systemClock });

  it('stores each venue\'s pools and drops the ones a venue no longer lists', async () => {
    expect(await syncPoolsOnce(deps(500))).to.deep.equal({ meteora: 3, raydium: 3, whirlpool: 3 });
    expect(await rows()).to.have.length(9);
    const sample = (await rows()).find((r) => r.address === key('pool:meteora:sol-usdc'));
    expect(sample).to.deep.include({ venue: 'meteora', symbol_x: 'SOL', symbol_y: 'USDC', tvl: 5_200_000 });

    expect(await syncPoolsOnce(deps(2))).to.deep.equal({ meteora: 2, raydium: 2, whirlpool: 2 });
    const raydium = (await rows()).filter((r) => r.venue === 'raydium').map((r) => r.address);
    expect(raydium).to.deep.equal([key('pool:raydium:rug-usdc'), key('pool:raydium:sol-usdc')]);
  });

  it('keeps a failing venue\'s previous pools', async () => {
    venues.raydium.setMode({ kind: 'down' });
    const report = await syncPoolsOnce(deps(500));
    venues.raydium.setMode({ kind: 'ok' });
    expect(report).to.deep.equal({ meteora: 3, raydium: 'failed', whirlpool: 3 });
    expect((await rows()).filter((r) => r.venue === 'raydium')).to.have.length(2);
  });

  it('runs once per interval across nodes', async () => {
    const node = () => startPoolSync({ ...deps(500), redis: env.redis, prefix: `${env.prefix}x:`, intervalMs: 60_000 });
    const before = venues.meteora.calls.length;
    const a = node();
    const b = node();
    try {
      const results = await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
      // one node took the run (its ticks share it); the other skipped
      expect(new Set(results.filter((r) => r !== undefined)).size).to.equal(1);
      expect(results.filter((r) => r === undefined)).to.have.length(2);
      expect(venues.meteora.calls.length).to.equal(before + 1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('starts with an API node and fills the table', async () => {
    await env.db.deleteFrom('pools').execute();
    const before = venues.whirlpool.calls.length;
    const api = await startTestApi(env, { ...venues.env, POOL_SYNC_INTERVAL_MS: '60000', UPSTREAM_TIMEOUT_MS: '300' },
      { modules: [registerHealthRoutes], attachments: [poolSyncAttachment] });
    try {
      for (let i = 0; i < 50 && (await rows()).length < 9; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await rows()).to.have.length(9);
      expect(venues.whirlpool.calls.length).to.be.greaterThan(before);
    } finally {
      await api.close();
    }
  });
});
