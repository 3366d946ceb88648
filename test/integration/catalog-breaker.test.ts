/**
 * The asset routes and pool search share one token catalog client per node, so one circuit
 * breaker: when the catalog fails under the asset routes, pool search stops asking it too
 * (its well-known tokens are named from the built-in map) instead of spending a timeout per request on an outage the
 * node already knows about.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { startVenueStandIns, type VenueStandIns } from '../support/upstreams/venues.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';
import { registerPoolRoutes } from '../../queries/pools/routes.js';

interface PoolBody { data: { results: { address: string }[] } }

describe('token catalog: one circuit breaker for the asset and pool routes', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  let venues: VenueStandIns;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('catalog-breaker');
    jup = await startJupiterStandIn();
    venues = await startVenueStandIns();
    const vars = { TOKENS_API_URL: jup.url, UPSTREAM_TIMEOUT_MS: '300', UPSTREAM_BREAKER_RESET_MS: '60000', POOL_SYNC_INTERVAL_MS: '0', ...venues.env };
    api = await startTestApi(env, vars, { modules: [registerAssetRoutes, registerPoolRoutes] });
  });
  after(async () => {
    await api?.close();
    await venues?.close();
    await jup?.close();
    await env?.close();
  });

  it('an outage seen by asset search opens the breaker for pool search as well', async () => {
    jup.setMode({ kind: 'down' });
    // the breaker opens after five calls in its window, all failed; a sixth is not attempted
    for (const q of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']) {
      const res = await fetch(`${api.url}/v1/assets/search?q=${q}`);
      expect(res.status, q).to.equal(200);
    }
    const asked = jup.searches();
    expect(asked, 'the asset routes opened the breaker').to.equal(5);

    const res = await fetch(`${api.url}/v1/pools/search?q=mSOL`);
    const body = await res.json() as PoolBody;
    expect(res.status).to.equal(200);
    expect(body.data.results.length, 'the venue still answers').to.be.above(0);
    expect(jup.searches(), 'pool search did not ask the catalog that the breaker holds open').to.equal(asked);
  });
});
