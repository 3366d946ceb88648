/**
 * A request the service cannot answer because a backing store is out of reach (a
 * PostgreSQL restart, a pool with no free connection) is a 503 with Retry-After in the
 * error envelope, never a 500: nothing was done and the caller may ask again. Every 503
 * says when: its own Retry-After, or the default.
 */
import { expect } from 'chai';
import { createServer } from 'node:net';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startApiServer } from '../../src/app/api-server.js';
import { buildContext, closeContext } from '../../src/app/build-context.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { expectError } from './auth-fixtures.js';

/** A port that accepts nothing: bound, then closed. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('a backing store out of reach: 503 with Retry-After', function () {
  this.timeout(30_000);
  let env: TestEnv;

  before(async () => { env = await createTestEnv('unavailable'); });
  after(async () => { await env.close(); });

  /** An API node on the test's database with `vars` set. */
  async function withNode(vars: Record<string, string>, run: (url: string) => Promise<void>): Promise<void> {
    const ctx = buildContext(loadConfig({ ...env.env, PORT: '0', READ_CACHE_TTL_MS: '0', ...vars }), createLogger('silent', 'test'), 'test');
    try {
      const server = await startApiServer(ctx, { port: 0, host: '127.0.0.1' });
      try { await run(server.url); } finally { await server.close(); }
    } finally {
      await closeContext(ctx);
    }
  }

  it('answers a read whose database refuses the connection with 503, Retry-After and the envelope, not 500', async () => {
    await withNode({ DATABASE_READ_URL: `postgres://postgres@127.0.0.1:${await deadPort()}/tributary` }, async (url) => {
      const res = await fetch(`${url}/v1/events?eventName=PaymentRecord`);
      const message = await expectError(res, 503);
      expect(res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
      expect(message).to.match(/did not answer/);
    });
  });

});
