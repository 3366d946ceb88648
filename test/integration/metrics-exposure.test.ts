/**
 * Issue 41, finding 7: /metrics stays open by default, but a node that serves it where
 * others can reach it without METRICS_TOKEN says so at start, with a warning naming the
 * way out: on the API port bound to a public interface, or on METRICS_PORT bound to a
 * METRICS_HOST that is not loopback. Loopback, or a token, starts quietly.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { loadConfig } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { startApiServer, type ApiServer } from '../../src/app/api-server.js';
import type { AppContext } from '../../src/app/context.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';

interface Line { level: number; msg: string }

describe('metrics: a warning when /metrics is open to the network (issue 41, finding 7)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  before(async () => { env = await createTestEnv('metrics-exposure'); });
  after(async () => { await env?.close(); });

  /** starts a node on `host`, returns its warnings about /metrics, and closes it */
  async function warningsAt(host: string, overrides: Record<string, string>): Promise<Line[]> {
    const lines: Line[] = [];
    const sink = new Writable({ write(chunk: Buffer, _enc, done) { for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Line); done(); } });
    const logger = pino({ level: 'warn' }, sink);
    const config = loadConfig({ ...env.env, PORT: '0', HOST: host, ...overrides });
    const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: systemClock };
    let server: ApiServer | undefined;
    try {
      server = await startApiServer(ctx, { port: 0, host });
    } finally {
      await server?.close();
    }
    return lines.filter((l) => l.msg.includes('/metrics'));
  }

  it('warns when /metrics is on the API port of a public interface without METRICS_TOKEN', async () => {
    const lines = await warningsAt('0.0.0.0', {});
    expect(lines).to.have.length(1);
    expect(lines[0]!.level).to.equal(40);
    expect(lines[0]!.msg).to.contain('METRICS_TOKEN');
    expect(lines[0]!.msg).to.contain('METRICS_PORT');
  });

  it('warns when METRICS_PORT listens on a METRICS_HOST that is not loopback without METRICS_TOKEN', async () => {
    const own = await warningsAt('127.0.0.1', { METRICS_PORT: String(await freePort()), METRICS_HOST: '0.0.0.0' });
    expect(own).to.have.length(1);
    expect(own[0]!.msg).to.contain('METRICS_TOKEN');
  });

  it('starts quietly with METRICS_TOKEN, on loopback, or with METRICS_PORT on loopback', async () => {
    expect(await warningsAt('0.0.0.0', { METRICS_TOKEN: 'scrape-secret' })).to.deep.equal([]);
    expect(await warningsAt('127.0.0.1', {})).to.deep.equal([]);
    expect(await warningsAt('0.0.0.0', { METRICS_PORT: String(await freePort()) })).to.deep.equal([]);
  });
});
