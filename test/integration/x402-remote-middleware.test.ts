/**
 * The middleware in remote-facilitator mode: an Express app with no chain connection and
 * no Redis of its own sells a route; the Tributary service (against a localnet started
 * here) verifies, settles and meters through /v1/x402/settle and /v1/x402/usage.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { paymentRequired, x402Grant } from '../../commands/x402/middleware.js';
import { parseKeyValueHeader, type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt } from './x402-facilitator-support.js';

describe('x402 middleware delegating to a remote facilitator', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let server: Server;
  let url = '';
  let accepts: AcceptedRequirement[];

  before(async () => {
    h = await startX402('remote');
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    const apiKey = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const demo = (await h.accepts()).map(({ resource: _r, id: _i, extra: _e, ...input }) => input);
    const app = express();
    app.get('/paid', paymentRequired(demo, { facilitatorUrl: h.api.url, apiKey, programId: PROGRAM_ID }), (_req, res) => {
      res.json({ content: 'remote-mode content', grant: x402Grant(res) });
    });
    server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paid`;
    accepts = ((await (await fetch(url)).json()) as any).accepts;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
  });

  it('answers 402 with the same requirement ids the service computes', async () => {
    expect(accepts.map((a) => a.id)).to.deep.equal((await h.accepts()).map((a) => a.id));
  });

  it('pays through the facilitator, then serves and meters the bearer', async () => {
    const payg = accepts[1]!;
    const payer = h.payer();
    const txs = h.txCount();
    const paid = await fetch(url, { headers: { payment: (await buildPayment(payg, { wallet: payer, rpc: h.rpc })).header } });
    const body = (await paid.json()) as any;
    expect(paid.status, JSON.stringify(body)).to.equal(200);
    expect(parseKeyValueHeader(paid.headers.get('payment-response')!)).to.include({ scheme: 'x402://payg', id: payg.id });
    expect(h.txCount()).to.equal(txs + 1);
    const served = await fetch(url, { headers: { authorization: `Bearer ${body.jwt}` } });
    const s = (await served.json()) as any;
    expect(served.status).to.equal(200);
    expect(s.grant).to.include({ payer: payer.publicKey.toBase58(), scheme: 'x402://payg', requirementId: payg.id });
    expect(s.grant.metered).to.include({ chunk: '10000', periodTotal: '10000' });
  });

  it('refuses a forged payment and a forged JWT with 402, sending nothing', async () => {
    const built = await buildPayment(accepts[0]!, { wallet: h.payer(), rpc: h.rpc });
    const p = JSON.parse(Buffer.from(built.header, 'base64').toString());
    const tx = Buffer.from(p.payload.serializedTransaction, 'base64');
    tx[3] = tx[3]! ^ 1;
    p.payload.serializedTransaction = tx.toString('base64');
    const txs = h.txCount();
    const r = await fetch(url, { headers: { payment: Buffer.from(JSON.stringify(p)).toString('base64') } });
    expect(r.status).to.equal(402);
    expect(((await r.json()) as any).error).to.match(/does not verify/);
    const b = await fetch(url, { headers: { authorization: 'Bearer abc.def.ghi' } });
    expect(b.status).to.equal(402);
    expect(h.txCount()).to.equal(txs);
  });
});
