/**
 * SPEC.md "Payment-gated resource flow", to the letter: step 1 is "any method on the
 * protected path, no payment" → 402 with `Payment-Required` and `{accepts}`. The demo
 * resource is protected for every method: each answers 402 unpaid, a Payment header sent
 * with any method settles (200 and a JWT), and the JWT opens every method. Against a
 * localnet started here (x402-harness.ts).
 */
import { expect } from 'chai';
import { parse } from 'yaml';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { parseKeyValueHeader, type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

describe('SPEC Payment-gated resource flow: any method on the protected path', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let url: string;
  let accepts: AcceptedRequirement[];

  const send = async (method: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await fetch(url, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };

  before(async () => {
    h = await startX402('methods');
    url = `${h.api.url}${DEMO_PATH}`;
    accepts = await h.accepts();
  });
  after(async () => { await h.close(); });

  it('"any method on the protected path, no payment": status 402 with Payment-Required and the same accepts for every method', async () => {
    const first = await send('GET');
    for (const method of METHODS) {
      const r = await send(method, {}, method === 'GET' || method === 'DELETE' ? undefined : { hello: 'world' });
      expect(r.status, method).to.equal(402);
      expect(r.headers.get('payment-required'), method).to.equal(first.headers.get('payment-required'));
      expect(r.body.accepts, method).to.deep.equal(accepts);
      expect(r.body, method).to.include({ x402Version: 2, code: 'payment_required', success: false });
    }
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).to.equal(402);
    expect(head.headers.get('payment-required')).to.equal(first.headers.get('payment-required'));
  });

  it('"then 200 with payment": a Payment header sent with POST settles, and its JWT serves every method', async () => {
    const deferred = accepts.find((a) => a.scheme === 'deferred')!;
    const payer = h.payer();
    const { header } = await buildPayment(deferred, { wallet: payer, rpc: h.rpc });
    const paid = await send('POST', { payment: header }, { order: 1 });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(Object.keys(paid.body).sort()).to.deep.equal(['jwt', 'message']);
    const pr = parseKeyValueHeader(paid.headers.get('payment-response')!);
    expect(pr).to.include({ scheme: 'deferred', id: deferred.id });
    for (const method of METHODS) {
      const r = await send(method, { authorization: `Bearer ${paid.body.jwt as string}` });
      expect(r.status, `${method} ${JSON.stringify(r.body)}`).to.equal(200);
      expect(r.body.method).to.equal(method);
      expect(r.body.grant).to.include({ payer: payer.publicKey.toBase58(), policy: pr['policy'], scheme: 'deferred' });
    }
  });

  it('"then 200 with payment": pay-as-you-go paid with DELETE, then metered per request on PUT', async () => {
    const payg = accepts.find((a) => a.scheme === 'x402://payg')!;
    const payer = h.payer();
    const { header } = await buildPayment(payg, { wallet: payer, rpc: h.rpc });
    const paid = await send('DELETE', { payment: header });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    const r = await send('PUT', { authorization: `Bearer ${paid.body.jwt as string}` }, { x: 1 });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.method).to.equal('PUT');
    expect(r.body.grant.metered).to.include({ chunk: String(payg.amount) });
  });

  it('a forged JWT is refused with 402 on every method', async () => {
    for (const method of METHODS) expect((await send(method, { authorization: 'Bearer a.b.c' })).status, method).to.equal(402);
  });

  it('publishes every method of the path in /openapi.yaml', async () => {
    const doc = parse(await (await fetch(`${h.api.url}/openapi.yaml`)).text()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths[DEMO_PATH] ?? {}).sort()).to.deep.equal(['delete', 'get', 'patch', 'post', 'put']);
  });
});
