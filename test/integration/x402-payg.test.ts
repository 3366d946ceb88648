/**
 * Pay-as-you-go: every bearer request is metered against the policy's caps, in Redis,
 * shared by every node; at the period's cap the answer is 402 again, and usage not charged
 * by the period's end counts in the next one (the program counts a charge in the period it
 * lands in). A merchant's own route (the middleware from the package entry) may
 * price a request itself; a chunk above max_chunk_amount is refused.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRpcClient, paymentRequired, x402Grant, payAndFetch, type AcceptedRequirement } from '../../src/app/index.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';
import { createDb } from '../../infra/postgres/database.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { freePort } from '../support/ports.js';

const PERIOD = 60;

describe('x402 pay-as-you-go metering', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let offsetMs = 0;
  const clock = { now: () => Date.now() + offsetMs };
  let payg: AcceptedRequirement;

  const bearer = async (base: string, jwt: string, path = DEMO_PATH) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${jwt}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const payForPayg = async (): Promise<string> => {
    const r = await payAndFetch(`${h.api.url}${DEMO_PATH}`, { wallet: h.payer(), rpcUrl: h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    expect(r.paid?.requirement.scheme).to.equal('x402://payg');
    return r.paid!.jwt;
  };

  before(async () => {
    h = await startX402('payg', {
      X402_DEMO_PAYG_PRICE: '10000', X402_DEMO_PAYG_MAX_CHUNK: '10000', X402_DEMO_PAYG_MAX_PER_PERIOD: '30000',
      X402_DEMO_PAYG_PERIOD_SECONDS: String(PERIOD),
    }, { clock });
    payg = (await h.accepts()).find((a) => a.scheme === 'x402://payg')!;
  });
  after(async () => { await h.close(); });

  it('meters each request until the period cap, then answers 402 with the requirements; usage not charged by the period\'s end fills the next', async () => {
    const jwt = await payForPayg(); // payAndFetch's own bearer request was the first metered one
    const second = await bearer(h.api.url, jwt);
    expect(second.status).to.equal(200);
    expect(second.body.grant.metered).to.include({ chunk: '10000', periodTotal: '20000', periodLimit: '30000' });
    expect((await bearer(h.api.url, jwt)).body.grant.metered.periodTotal).to.equal('30000');
    const refused = await bearer(h.api.url, jwt);
    expect(refused.status).to.equal(402);
    expect(refused.body.error).to.match(/cap of 30000 is reached/);
    expect(refused.body.accepts.map((a: AcceptedRequirement) => a.id)).to.include(payg.id);

    // the period ended with its 30000 not charged (no settler runs here): the program counts a charge in the
    // period it lands in, which starts at the first charge after the end, so that usage fills the next period
    offsetMs = PERIOD * 1000;
    try {
      const next = await bearer(h.api.url, jwt);
      expect(next.status).to.equal(402);
      expect(next.body.error).to.match(/cap of 30000 is reached \(30000 used, this request costs 10000\)/);
    } finally {
      offsetMs = 0;
    }
  });

  it('shares the period total across nodes: concurrent requests on two nodes pass the cap never', async () => {
    const other = await h.secondNode();
    const jwt = await payForPayg(); // 10000 of 30000 used
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => bearer(i % 2 ? other.url : h.api.url, jwt)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).to.have.length(2);
    expect(results.filter((r) => r.status === 402)).to.have.length(10);
    expect(ok.map((r) => r.body.grant.metered.periodTotal).sort()).to.deep.equal(['20000', '30000']);
  });

  describe('on a merchant route priced per request', () => {
    let server: Server;
    let base: string;
    before(async () => {
      const ctx = h.api.ctx;
      const deps = {
        rpc: createRpcClient({ url: h.overrides['SOLANA_RPC_URL']!, timeoutMs: 5000 }), programId: payg.extra.programId,
        redis: ctx.redis, redisPrefix: ctx.config.redis.prefix, signer: h.api.node.keyRing, clock, cacheMs: 0,
      };
      const { id: _i, currency: _c, resource: _r, extra: _e, description: _d, ...terms } = payg;
      const app = express();
      app.get('/report', paymentRequired([terms], deps, { price: (req) => Number(req.query['units'] ?? 1) * 10_000 }), (_req, res) => {
        res.json({ report: 'ok', grant: x402Grant(res) });
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => { await new Promise((r) => server.close(r)); });

    it('answers 503, not 500, when the usage ledger does not answer (a PostgreSQL restart), and meters nothing', async () => {
      const ledgerDb = createDb(`postgres://postgres@127.0.0.1:${await freePort()}/nothing-listens`, 1, 'payg-ledger-down');
      const ctx = h.api.ctx;
      const deps = {
        rpc: createRpcClient({ url: h.overrides['SOLANA_RPC_URL']!, timeoutMs: 5000 }), programId: payg.extra.programId,
        redis: ctx.redis, redisPrefix: ctx.config.redis.prefix, signer: h.api.node.keyRing, clock, cacheMs: 0, usage: createUsageLedger(ledgerDb),
      };
      const { id: _i, currency: _c, resource: _r, extra: _e, description: _d, ...terms } = payg;
      const app = express();
      app.get('/metered', paymentRequired([terms], deps), (_req, res) => { res.json({ ok: true }); });
      const down = app.listen(0, '127.0.0.1');
      await new Promise((r) => down.once('listening', r));
      try {
        const jwt = await payForPayg();
        const res = await fetch(`http://127.0.0.1:${(down.address() as AddressInfo).port}/metered`, { headers: { authorization: `Bearer ${jwt}` } });
        expect(res.status, await res.text()).to.equal(503);
      } finally {
        await new Promise((r) => down.close(r));
        await ledgerDb.destroy();
      }
    });

    it('accepts the demo\'s JWT (same terms, same requirement id) and refuses a chunk above max_chunk_amount', async () => {
      const jwt = await payForPayg();
      const one = await bearer(base, jwt, '/report?units=1');
      expect(one.status).to.equal(200);
      expect(one.body.grant).to.include({ requirementId: payg.id, scheme: 'x402://payg' });
      const two = await bearer(base, jwt, '/report?units=2');
      expect(two.status).to.equal(402);
      expect(two.body.error).to.match(/costs 20000, above the policy's max_chunk_amount 10000/);
    });
  });
});
