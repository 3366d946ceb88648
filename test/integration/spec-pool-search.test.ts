/**
 * SPEC.md "Pool search", to the letter: "On any error the response is 200 with
 * `results: []`, never a 500" (and the error table: "Pool search any error | 200, empty
 * results"). Our decision (docs/decisions.md): bad input is an error of pool search too,
 * so a missing or blank q, an unknown venue, a malformed limit and an unknown parameter
 * answer 200 with no results, `data.error` saying why, and no venue is asked. Against
 * stand-ins of the venues and the token catalog.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { startVenueStandIns, type VenueStandIns } from '../support/upstreams/venues.js';
import { registerPoolRoutes } from '../../queries/pools/routes.js';

interface Body { success: boolean; timestamp: number; data: { query: string; venue: string | null; results: { venue: string }[]; error?: string } }

describe('SPEC Pool search: on any error the response is 200 with results: [], never a 500', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  let venues: VenueStandIns;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('spec-pool-search');
    jup = await startJupiterStandIn();
    venues = await startVenueStandIns();
    api = await startTestApi(env, { TOKENS_API_URL: jup.url, UPSTREAM_TIMEOUT_MS: '300', POOL_SYNC_INTERVAL_MS: '0', ...venues.env }, { modules: [registerPoolRoutes] });
  });
  after(async () => {
    await api?.close();
    await venues?.close();
    await jup?.close();
    await env?.close();
  });

  const search = async (qs: string) => {
    const res = await fetch(`${api.url}/v1/pools/search${qs}`);
    return { status: res.status, body: (await res.json()) as Body };
  };
  const venueCalls = () => venues.meteora.calls.length + venues.raydium.calls.length + venues.whirlpool.calls.length;
  const expectNoResults = async (qs: string, data: { query: string; venue: string | null }, why: RegExp) => {
    const before = venueCalls();
    const r = await search(qs);
    expect(r.status, qs).to.equal(200);
    expect(r.body.success, qs).to.equal(true);
    expect(r.body.timestamp, qs).to.be.a('number');
    expect(r.body.data, qs).to.include(data);
    expect(r.body.data.results, qs).to.deep.equal([]);
    expect(r.body.data.error, qs).to.match(why);
    expect(venueCalls(), `${qs}: no venue asked`).to.equal(before);
  };

  it('a valid search finds pools (so the empty answers below are the errors, not an empty index)', async () => {
    const r = await search('?q=mSOL');
    expect(r.status).to.equal(200);
    expect(r.body.data.results).to.not.deep.equal([]);
    expect(r.body.data).to.not.have.property('error');
  });

  it('"any error": a missing or blank q answers 200 with results []', async () => {
    await expectNoResults('', { query: '', venue: null }, /'q'/);
    await expectNoResults('?venue=meteora', { query: '', venue: 'meteora' }, /'q'/);
    await expectNoResults('?q=', { query: '', venue: null }, /'q'/);
    await expectNoResults('?q=%20%20', { query: '', venue: null }, /'q' must not be blank/);
  });

  it('"any error": an unknown venue answers 200 with results [], the venue asked for echoed', async () => {
    await expectNoResults('?q=SOL&venue=uniswap', { query: 'SOL', venue: 'uniswap' }, /venue/);
    await expectNoResults('?q=SOL&venue=Meteora', { query: 'SOL', venue: 'Meteora' }, /venue/);
  });

  it('"any error": a malformed limit, a repeated q and an unknown parameter answer 200 with results []', async () => {
    await expectNoResults('?q=SOL&limit=x', { query: 'SOL', venue: null }, /limit/);
    await expectNoResults('?q=SOL&foo=1', { query: 'SOL', venue: null }, /foo/);
    await expectNoResults('?q=SOL&q=USDC', { query: '', venue: null }, /q/);
  });
});
