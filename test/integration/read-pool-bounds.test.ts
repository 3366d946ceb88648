/**
 * Issue 15, finding 6: deep pages are bounded. `offset` is capped at MAX_OFFSET (400 past
 * it, in the envelope), and the query routes' read pool has a statement timeout; a query
 * cut off by it answers 503, never a 500.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startApiServer } from '../../src/app/api-server.js';
import { buildContext, closeContext } from '../../src/app/build-context.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { MAX_OFFSET } from '../../src/kernel/http/schema.js';
import { expectError } from './auth-fixtures.js';

describe('read bounds: offset cap and the read pool\'s statement timeout', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('read-bounds');
    api = await startTestApi(env);
  });
  after(async () => {
    await api.close();
    await env.close();
  });

  it(`accepts offset ${MAX_OFFSET} and refuses ${MAX_OFFSET + 1} with 400 on every paged route`, async () => {
    expect((await fetch(`${api.url}/v1/events?offset=${MAX_OFFSET}`)).status).to.equal(200);
    for (const path of ['/v1/events', '/v1/events/payments', '/v1/events/typed/PaymentRecord', '/v1/onetime/order-1']) {
      expect(await expectError(await fetch(`${api.url}${path}?offset=${MAX_OFFSET + 1}`), 400), path).to.match(/offset/);
    }
    await expectError(await fetch(`${api.url}/v1/events?offset=10000000`), 400);
  });

  it('cuts a long query on the read pool (not on the primary) and answers 503', async () => {
    const config = loadConfig({ ...env.env, PORT: '0', DATABASE_READ_STATEMENT_TIMEOUT_MS: '100' });
    const ctx = buildContext(config, createLogger('silent', 'test'), 'test');
    try {
      let code: unknown;
      await sql`SELECT pg_sleep(0.5)`.execute(ctx.dbRead).catch((e: { code?: unknown }) => { code = e.code; });
      expect(code).to.equal('57014');
      await sql`SELECT pg_sleep(0.2)`.execute(ctx.db);
      // a route whose query runs past the timeout: a 503 in the envelope
      const slow = { ...ctx, dbRead: ctx.dbRead.withPlugin({
        transformQuery: (a) => a.node,
        transformResult: async (a) => { await sql`SELECT pg_sleep(0.5)`.execute(ctx.dbRead); return a.result; },
      }) };
      const server = await startApiServer(slow, { port: 0, host: '127.0.0.1' });
      try {
        const res = await fetch(`${server.url}/v1/events?eventName=PaymentRecord`);
        expect(await expectError(res, 503)).to.match(/too long/);
      } finally {
        await server.close();
      }
    } finally {
      await closeContext(ctx);
    }
  });
});
