/**
 * SPEC.md "One-time payments", to the letter: "data = a single object when exactly one
 * record matches, otherwise an array". The shape follows the number of records matching
 * the trackingId (and recipient filter), never the size of the page. Read models built by
 * the real projections from the story in readmodels-scenario.ts: two OneTime policies
 * carry the tracking id onetime-42 (one per recipient).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by shape */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { buildScenario, K, P, project } from './readmodels-scenario.js';

describe('SPEC One-time payments: data is a single object when exactly one record matches, otherwise an array', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;

  const data = async (path: string): Promise<any> => {
    const res = await fetch(`${api.url}${path}`);
    const body = (await res.json()) as { success: boolean; data: unknown };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.success).to.equal(true);
    return body.data;
  };
  const addresses = (list: any): string[] => {
    expect(list).to.be.an('array');
    return (list as { address: string }[]).map((p) => p.address);
  };

  before(async () => {
    env = await createTestEnv('spec-onetime');
    await project(env, PROJECTIONS, buildScenario());
    api = await startTestApi(env);
  });
  after(async () => { await api?.close(); await env?.close(); });

  it('"otherwise an array": two matches answer an array, newest first', async () => {
    expect(addresses(await data('/v1/onetime/onetime-42'))).to.deep.equal([P.once2, P.once1]);
  });

  it('"decided by the number of matching records, not by the size of the page": two matches with limit=1 or offset=1 answer arrays of one', async () => {
    expect(addresses(await data('/v1/onetime/onetime-42?limit=1'))).to.deep.equal([P.once2]);
    expect(addresses(await data('/v1/onetime/onetime-42?offset=1'))).to.deep.equal([P.once1]);
    expect(addresses(await data('/v1/onetime/onetime-42?limit=1&offset=1'))).to.deep.equal([P.once1]);
    expect(addresses(await data('/v1/onetime/onetime-42?offset=2'))).to.deep.equal([]);
  });

  it('"a single object when exactly one record matches": the recipient filter leaves one, answered as that object whatever the page', async () => {
    for (const page of ['', '&limit=1', '&limit=5', '&offset=0', '&offset=1', '&limit=1&offset=3']) {
      const one = await data(`/v1/onetime/onetime-42?recipient=${K.r1}${page}`);
      expect(one, page).to.not.be.an('array');
      expect(one, page).to.include({ address: P.once1, variant: 'OneTime', status: 'Completed', trackingId: 'onetime-42' });
    }
    expect(await data(`/v1/onetime/onetime-42?recipient=${K.r2}&limit=1`)).to.include({ address: P.once2 });
  });

  it('"otherwise an array": no match answers an empty array', async () => {
    expect(await data('/v1/onetime/nothing-here')).to.deep.equal([]);
    expect(await data(`/v1/onetime/onetime-42?recipient=${K.w1}`)).to.deep.equal([]);
  });
});
