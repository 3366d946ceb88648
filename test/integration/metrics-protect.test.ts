/** Issue 15: /metrics can be protected with METRICS_TOKEN, or moved to METRICS_PORT. */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { freePort } from '../support/ports.js';

describe('metrics: token and own port', () => {
  let env: TestEnv;
  const apis: TestApi[] = [];
  before(async () => { env = await createTestEnv('metrics-protect'); });
  after(async () => {
    for (const a of apis) await a.close();
    await env.close();
  });

  it('with METRICS_TOKEN: 401 in the envelope without the bearer token or with another, 200 with it', async () => {
    const api = await startTestApi(env, { METRICS_TOKEN: 'scrape-secret' });
    apis.push(api);
    const none = await fetch(`${api.url}/metrics`);
    expect(none.status).to.equal(401);
    expect(((await none.json()) as { code: string }).code).to.equal('unauthorized');
    expect((await fetch(`${api.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).to.equal(401);
    const ok = await fetch(`${api.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
    expect(ok.status).to.equal(200);
    expect(await ok.text()).to.contain('tributary_http_request_duration_seconds');
  });

  it('with METRICS_PORT: served there only, and the API port answers 404', async () => {
    const port = await freePort();
    const api = await startTestApi(env, { METRICS_PORT: String(port) });
    apis.push(api);
    expect((await fetch(`${api.url}/metrics`)).status).to.equal(404);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.contain('tributary_process_');
    expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).to.equal(404);
  });
});
