/**
 * TOKENS_API_KEY never leaves the server: the catalog receives it, while no response
 * (body or header, success or failure, the OpenAPI document included) and no log line
 * at any level carries it.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { NO_VENUES, MINTS, key } from '../support/upstreams/fixtures.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import type { AppContext } from '../../src/app/context.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { startApiServer, type ApiServer } from '../../src/app/api-server.js';
import { REDACT_PATHS } from '../../infra/log/logger.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';
import { registerPoolRoutes } from '../../queries/pools/routes.js';

const SECRET = 'tok-SECRET-5c1a9e77d2b04f63';

describe('the token catalog credential', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  let server: ApiServer;
  const logLines: string[] = [];

  before(async () => {
    env = await createTestEnv('assets-secret');
    jup = await startJupiterStandIn({ apiKey: SECRET });
    const config = loadConfig({ ...env.env, PORT: '0', TOKENS_API_URL: jup.url, TOKENS_API_KEY: SECRET, UPSTREAM_TIMEOUT_MS: '200', LOG_LEVEL: 'trace', ...NO_VENUES });
    const sink = new Writable({ write(chunk: Buffer, _enc, done) { logLines.push(chunk.toString('utf8')); done(); } });
    const logger = pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: systemClock };
    server = await startApiServer(ctx, { port: 0, host: '127.0.0.1', modules: [registerAssetRoutes, registerPoolRoutes] });
  });
  after(async () => {
    await server.close();
    await jup.close();
    await env.close();
  });

  async function exchange(path: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await fetch(`${server.url}${path}`, { headers });
    return `${res.status} ${JSON.stringify([...res.headers.entries()])} ${await res.text()}`;
  }

  it('reaches the catalog and nothing else', async () => {
    const seen: string[] = [];
    seen.push(await exchange('/v1/assets/search?q=USDC'));
    seen.push(await exchange(`/v1/assets/resolve?mint=${MINTS.JUP}`));
    seen.push(await exchange(`/v1/assets/resolve?mint=${key('unknown-mint-x')}`));
    seen.push(await exchange('/v1/pools/search?q=SOL'));
    seen.push(await exchange('/v1/assets/search?q=USDC', { 'x-api-key': 'client-sent', authorization: 'Bearer abc' }));
    seen.push(await exchange('/v1/assets/search'));
    for (const mode of [{ kind: 'down' }, { kind: 'slow', ms: 1000 }, { kind: 'drop' }] as const) {
      jup.setMode(mode);
      seen.push(await exchange('/v1/assets/search?q=Bonk'));
      seen.push(await exchange(`/v1/assets/resolve?mint=${key(`failing-${mode.kind}`)}`));
      seen.push(await exchange(`/v1/assets/resolve?mint=${MINTS.SOL}`));
    }
    jup.setMode({ kind: 'ok' });
    seen.push(await exchange('/openapi.yaml'));

    expect(jup.calls.length).to.be.greaterThan(0);
    expect(jup.calls.every((c) => c.headers['x-api-key'] === SECRET)).to.equal(true);
    expect(seen.length).to.be.greaterThan(10);
    for (const s of seen) expect(s).to.not.include(SECRET);
    expect(logLines.length).to.be.greaterThan(5);
    for (const line of logLines) expect(line).to.not.include(SECRET);
    // and the failures were logged (so the check above looked at real error lines)
    expect(logLines.some((l) => l.includes('catalog'))).to.equal(true);
  });
});
