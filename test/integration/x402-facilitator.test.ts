/**
 * The x402 facilitator against a localnet started here: /supported; API keys (created
 * with the gateway JWT, shown once, refused once revoked); /verify answering the middleware's
 * reasons with nothing sent; /settle sending once and answering the JWT; the
 * payment-identifier extension; /usage metering pay-as-you-go; resources and discovery.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { buildPayment, resignPayment, resignPaymentHeader } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

describe('x402 facilitator: supported, verify, settle, usage, discovery', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let deferred: AcceptedRequirement;
  let payg: AcceptedRequirement;
  let key = '';
  let keyId = '';
  let gateway = '';
  const post = (path: string, body: unknown, headers: Record<string, string> = { 'x-api-key': key }) => call(h.api.url, 'POST', path, body, headers);
  const payload = async (payer: Keypair, r: AcceptedRequirement) => payloadOf((await buildPayment(r, { wallet: payer, rpc: h.rpc })).header);
  // the payer's client presenting a payment again signs a fresh proof: a proof is answered once
  const resigned = (p: any, payer: Keypair, r: AcceptedRequirement) => ({ ...p, payload: resignPayment(p.payload, payer, { requirementId: r.id, resource: r.resource }) });

  before(async () => {
    h = await startX402('facilitator');
    [deferred, payg] = (await h.accepts()) as [AcceptedRequirement, AcceptedRequirement];
    gateway = deferred.gateway;
  });
  after(async () => { await h.close(); });

  it('lists the schemes, the network and the payment-identifier extension', async () => {
    const r = await call(h.api.url, 'GET', '/v1/x402/supported');
    expect(r.status).to.equal(200);
    expect(r.body.kinds.map((k: any) => k.scheme)).to.include.members(['deferred', 'x402://payg']);
    expect(r.body.kinds[0]).to.deep.include({ x402Version: 2, network: 'solana:localnet', extra: { programId: PROGRAM_ID } });
    expect(r.body.extensions).to.deep.equal(['payment-identifier']);
  });

  it('creates an API key with the gateway JWT, shown once and stored hashed', async () => {
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gateway, gw.authority);
    expect((await post(`/v1/gateway/${gateway}/api-keys`, {}, {})).status).to.equal(401);
    const other = await gatewayJwt(h, Keypair.generate().publicKey.toBase58(), gw.authority);
    expect((await post(`/v1/gateway/${gateway}/api-keys`, {}, { authorization: `Bearer ${other}` })).status).to.equal(403);
    const r = await post(`/v1/gateway/${gateway}/api-keys`, { label: 'python merchant' }, { authorization: `Bearer ${jwt}` });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({ gateway, label: 'python merchant', revokedAt: null });
    expect(r.body.key).to.match(/^tak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    key = r.body.key;
    keyId = r.body.id;
    const row = await h.env.db.selectFrom('gateway_api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
    expect(row.key_hash).to.match(/^[0-9a-f]{64}$/).and.not.contain(key);
    const list = await call(h.api.url, 'GET', `/v1/gateway/${gateway}/api-keys`, undefined, { authorization: `Bearer ${jwt}` });
    expect(list.body.map((k: any) => k.id)).to.deep.equal([keyId]);
    expect(JSON.stringify(list.body)).to.not.contain(key);
  });

  it('refuses a caller without credentials, with a wrong key, or for another gateway', async () => {
    const body = { paymentPayload: await payload(h.payer(), deferred), paymentRequirements: deferred };
    expect((await post('/v1/x402/verify', body, {})).status).to.equal(401);
    expect((await post('/v1/x402/verify', body, { 'x-api-key': `${key.slice(0, -2)}xx` })).status).to.equal(401);
    const foreign = { ...deferred, gateway: Keypair.generate().publicKey.toBase58() };
    const r = await post('/v1/x402/verify', { ...body, paymentRequirements: foreign });
    expect(r.status).to.equal(403);
    expect(r.body.success).to.equal(false);
  });

  it('verifies a valid payment without sending anything', async () => {
    const payer = h.payer();
    const before = h.txCount();
    const r = await post('/v1/x402/verify', { x402Version: 2, paymentPayload: await payload(payer, deferred), paymentRequirements: deferred });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.equal({ isValid: true, payer: payer.publicKey.toBase58() });
    expect(h.txCount()).to.equal(before);
    expect(h.rpcCalls()).to.not.include('sendTransaction');
  });

  it('answers a forged or mismatched payload isValid false with the reason, and settle sends nothing', async () => {
    const payer = h.payer();
    const good = await payload(payer, deferred);
    const bytes = Buffer.from(good.payload.serializedTransaction, 'base64');
    bytes[5] = bytes[5]! ^ 0xff; // inside the first signature
    const forged = { ...good, payload: { serializedTransaction: bytes.toString('base64') } };
    const elsewhere = await payload(payer, { ...deferred, recipient: Keypair.generate().publicKey.toBase58() });
    const before = h.txCount();
    const cases: [unknown, AcceptedRequirement, RegExp][] = [
      [forged, deferred, /signature of .* does not verify/],
      [elsewhere, deferred, /the recipient is .*; the requirement asks/],
      [good, { ...deferred, amount: 2_000_000 }, /names requirement .* which this resource does not accept/],
      [{ ...good, x402Version: 1 }, deferred, /x402Version must be 2/],
      [{ ...good, payload: { serializedTransaction: good.payload.serializedTransaction } }, deferred, /carries no proof/],
      [{ ...good, payload: { ...good.payload, proof: { ...good.payload.proof, signedAt: good.payload.proof.signedAt + 1 } } }, deferred, /is not the payer's/],
    ];
    for (const [p, req, reason] of cases) {
      const v = await post('/v1/x402/verify', { paymentPayload: p, paymentRequirements: req });
      expect(v.status).to.equal(200);
      expect(v.body.isValid).to.equal(false);
      expect(v.body.invalidReason).to.match(reason);
      const s = await post('/v1/x402/settle', { paymentPayload: p, paymentRequirements: req });
      expect(s.status).to.equal(200);
      expect(s.body).to.include({ success: false, network: 'solana:localnet' });
      expect(s.body.errorReason).to.match(reason);
      expect(s.body.jwt).to.equal(undefined);
    }
    expect(h.txCount()).to.equal(before);
  });

  it('answers 400 for requirements that are not valid terms', async () => {
    const p = await payload(h.payer(), deferred);
    for (const bad of [{ ...deferred, amount: 0 }, { ...deferred, paymentFrequency: 'Fortnightly' }, { ...deferred, extra: { programId: gateway } }, { scheme: 'deferred' }]) {
      const r = await post('/v1/x402/verify', { paymentPayload: p, paymentRequirements: bad });
      expect(r.status, JSON.stringify(bad)).to.equal(400);
      expect(r.body).to.include({ success: false });
    }
  });

  let jwt = '';
  it('settles: sends once, confirms, answers the JWT, the policy and the transaction', async () => {
    const payer = h.payer();
    const body = { paymentPayload: await payload(payer, payg), paymentRequirements: payg };
    const before = h.txCount();
    const r = await post('/v1/x402/settle', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
    expect(r.body.transaction).to.match(/^[1-9A-HJ-NP-Za-km-z]{87,88}$/);
    expect(r.body.jwt).to.be.a('string');
    expect(r.body.paymentResponse).to.contain(`policy=${r.body.policy}`);
    expect(h.txCount()).to.equal(before + 1);
    const acc = await readProgramAccount(h.rpc, r.body.policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(acc.kind === 'found' && acc.data['status']).to.equal('Active');
    jwt = r.body.jwt;
    const copy = await post('/v1/x402/settle', body);
    expect(copy.body, 'a copy of the payload').to.include({ success: false });
    expect(copy.body.errorReason).to.match(/was used already/);
    expect(copy.body.jwt).to.equal(undefined);
    const again = await post('/v1/x402/settle', { ...body, paymentPayload: resigned(body.paymentPayload, payer, payg) });
    expect(again.body.transaction).to.equal(r.body.transaction);
    expect(again.body.jwt).to.equal(r.body.jwt);
    expect(h.txCount()).to.equal(before + 1);
  });

  it('meters pay-as-you-go usage against the JWT and refuses past the per-request cap', async () => {
    const ok = await post('/v1/x402/usage', { jwt, paymentRequirements: [deferred, payg], amount: '50000' });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body).to.include({ admitted: true, scheme: 'x402://payg', requirementId: payg.id });
    expect(ok.body.metered).to.include({ chunk: '50000', periodTotal: '50000', periodLimit: '1000000' });
    const dflt = await post('/v1/x402/usage', { jwt, paymentRequirements: payg });
    expect(dflt.body.metered).to.include({ chunk: '10000', periodTotal: '60000' });
    const big = await post('/v1/x402/usage', { jwt, paymentRequirements: payg, amount: 100_001 });
    expect(big.body.admitted).to.equal(false);
    expect(big.body.reason).to.match(/max_chunk_amount/);
    const wrong = await post('/v1/x402/usage', { jwt, paymentRequirements: deferred });
    expect(wrong.body).to.deep.equal({ admitted: false, reason: 'the JWT was issued for a requirement this resource does not accept' });
    const forged = await post('/v1/x402/usage', { jwt: `${jwt.slice(0, -4)}AAAA`, paymentRequirements: payg });
    expect(forged.body.admitted).to.equal(false);
  });

  it('honours the payment-identifier extension: same id and payment, same answer (to a fresh proof); another payload, 409', async () => {
    const ext = { 'payment-identifier': { info: { id: `pay_${Date.now()}_0123456789abcdef` } } };
    const payer = h.payer();
    const p1 = { ...(await payload(payer, deferred)), extensions: ext };
    const p2 = { ...(await payload(h.payer(), deferred)), extensions: ext };
    const before = h.txCount();
    const a = await post('/v1/x402/settle', { paymentPayload: p1, paymentRequirements: deferred });
    const copy = await post('/v1/x402/settle', { paymentPayload: p1, paymentRequirements: deferred });
    const b = await post('/v1/x402/settle', { paymentPayload: resigned(p1, payer, deferred), paymentRequirements: deferred });
    expect(a.body.success, JSON.stringify(a.body)).to.equal(true);
    expect(copy.body.errorReason, 'the same proof again').to.match(/was used already/);
    expect(b.body).to.deep.equal(a.body);
    const c = await post('/v1/x402/settle', { paymentPayload: p2, paymentRequirements: deferred });
    expect(c.status).to.equal(409);
    expect((await post('/v1/x402/verify', { paymentPayload: p2, paymentRequirements: deferred })).status).to.equal(409);
    expect(h.txCount()).to.equal(before + 1);
    const bad = { ...p1, extensions: { 'payment-identifier': { info: { id: 'short' } } } };
    expect((await post('/v1/x402/settle', { paymentPayload: bad, paymentRequirements: deferred })).status).to.equal(400);
  });

  it('honours payment-identifier in the middleware too: the same id and payment, the same answer (to a fresh proof); another payment, 409', async () => {
    const ext = { 'payment-identifier': { info: { id: `mw_${Date.now()}_0123456789abcdef` } } };
    const header = async (payer = h.payer()) => Buffer.from(JSON.stringify({ ...(await payload(payer, deferred)), extensions: ext })).toString('base64');
    const demo = `${h.api.url}/v1/x402/demo`;
    const payer = h.payer();
    const first = await header(payer);
    const before = h.txCount();
    const a = await fetch(demo, { headers: { payment: first } });
    const copy = await fetch(demo, { headers: { payment: first } });
    const b = await fetch(demo, { headers: { payment: resignPaymentHeader(first, payer, deferred.resource) } });
    expect(a.status).to.equal(200);
    expect(copy.status, 'the same proof again').to.equal(402);
    expect(await b.json()).to.deep.equal(await a.json());
    const c = await fetch(demo, { headers: { payment: await header() } });
    expect(c.status).to.equal(409);
    expect(((await c.json()) as any).code).to.equal('conflict');
    expect(h.txCount()).to.equal(before + 1);
  });

  it('registers resources and lists the discoverable ones by type, limit and offset once their origin is proven', async () => {
    // the merchant's origin, on loopback (allowed on the localnet): it publishes the token the registration answers
    let tokens = '';
    const site = createServer((req, res) => {
      if (req.url === '/.well-known/tributary-x402.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end(tokens);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    try {
      const reg = (resource: string, discoverable: boolean) => call(h.api.url, 'PUT', '/v1/x402/resources', {
        resource, description: 'weather report', discoverable, input: { method: 'GET' }, output: { mimeType: 'application/json' }, accepts: [payg],
      }, { 'x-api-key': key });
      const first = await reg(`${origin}/weather`, true);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.accepts[0]).to.include({ id: payg.id, resource: `${origin}/weather` });
      expect(first.body).to.include({ verified: false, listed: false });
      await reg(`${origin}/hidden`, false);
      await reg(`${origin}/news`, true);
      expect((await call(h.api.url, 'GET', '/v1/x402/discovery/resources')).body.pagination.total).to.equal(0);
      tokens = `${first.body.proof.token}\n`;
      const proven = await post('/v1/x402/resources/verify', { origin });
      expect(proven.status, JSON.stringify(proven.body)).to.equal(200);
      const all = await call(h.api.url, 'GET', '/v1/x402/discovery/resources?type=http');
      expect(all.body.pagination).to.deep.equal({ limit: 20, offset: 0, total: 2 });
      expect(all.body.items.map((i: any) => i.resource)).to.deep.equal([`${origin}/weather`, `${origin}/news`]);
      expect(all.body.items[0]).to.deep.include({ type: 'http', x402Version: 2, metadata: { description: 'weather report', input: { method: 'GET' }, output: { mimeType: 'application/json' } } });
      const page = await call(h.api.url, 'GET', '/v1/x402/discovery/resources?limit=1&offset=1');
      expect(page.body.items.map((i: any) => i.resource)).to.deep.equal([`${origin}/news`]);
      for (const q of ['limit=0', 'limit=101', 'offset=-1', 'type=ftp']) {
        expect((await call(h.api.url, 'GET', `/v1/x402/discovery/resources?${q}`)).status, q).to.equal(400);
      }
    } finally {
      site.closeAllConnections();
      await new Promise((r) => site.close(r));
    }
  });

  it('refuses a revoked key', async () => {
    const gw = h.ln.fixtures.gateways[0]!;
    const jwtGw = await gatewayJwt(h, gateway, gw.authority);
    const del = await call(h.api.url, 'DELETE', `/v1/gateway/${gateway}/api-keys/${keyId}`, undefined, { authorization: `Bearer ${jwtGw}` });
    expect(del.status).to.equal(200);
    expect(del.body.revokedAt).to.be.a('string');
    const r = await post('/v1/x402/verify', { paymentPayload: await payload(h.payer(), deferred), paymentRequirements: deferred });
    expect(r.status).to.equal(401);
  });
});
