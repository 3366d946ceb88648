/**
 * Issue 15, "limits before work": /v1/health has no rate limit (load balancers probe it),
 * so its checks are shared: a flood of 200 probes costs one database query per second per node.
 */
import { expect } from 'chai';
import type { KyselyPlugin } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startApiServer, type ApiServer } from '../../src/app/api-server.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { registerHealthRoutes } from '../../queries/health/routes.js';

describe('health probes share their checks', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let server: ApiServer;
  let queries = 0;
  const counter: KyselyPlugin = { transformQuery(a) { queries += 1; return a.node; }, async transformResult(a) { return a.result; } };

  before(async () => {
    env = await createTestEnv('health-coalesce');
    const config = loadConfig({ ...env.env, PORT: '0', HOST: '127.0.0.1' });
    const ctx = { config, db: env.db, dbRead: env.db.withPlugin(counter), redis: env.redis, keys: env.keys, logger: createLogger('silent', 't'), clock: systemClock };
    server = await startApiServer(ctx, { port: 0, host: '127.0.0.1', modules: [registerHealthRoutes] });
  });
  after(async () => { await server.close(); await env.close(); });

  it('answers 200 probes, all ok, with one query per second at most', async () => {
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 200; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => fetch(`${server.url}/v1/health`)));
      for (const r of batch) {
        statuses.push(r.status);
        expect(((await r.json()) as { data: { status: string } }).data.status).to.equal('ok');
      }
    }
    expect(statuses.every((s) => s === 200)).to.equal(true);
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(queries).to.be.at.least(1).and.at.most(seconds + 1);
  });
});
