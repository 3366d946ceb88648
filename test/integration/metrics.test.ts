/** /metrics: Prometheus text with HTTP latency by route and the spine's shared gauges. */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { appendEvents } from '../../infra/redis/event-stream.js';
import { syntheticEvents } from '../support/synthetic-events.js';

describe('metrics', () => {
  let env: TestEnv;
  let api: TestApi;
  before(async () => { env = await createTestEnv('metrics'); api = await startTestApi(env); });
  after(async () => { await api.close(); await env.close(); });

  it('reports request latency by route, stream length and per-group lag', async () => {
    await appendEvents(env.redis, env.keys, syntheticEvents(5, 1));
    await env.redis.xgroup('CREATE', env.keys.events, 'archive', '0');
    expect((await fetch(`${api.url}/v1/health`)).status).to.equal(200);
    const res = await fetch(`${api.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('text/plain');
    const text = await res.text();
    expect(text).to.match(/tributary_http_request_duration_seconds_count\{method="GET",route="\/v1\/health",status="200"\} 1/);
    expect(text).to.contain('tributary_stream_length 5');
    expect(text).to.contain('tributary_projection_lag{group="archive"} 5');
    expect(text).to.contain('tributary_dead_letters{group="archive"} 0');
  });
});
