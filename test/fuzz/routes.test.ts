/**
 * Every route of the OpenAPI document, fed invalid and hostile input generated from its
 * own schemas (fast-check, seeded): no answer is a 5xx (a 503 only where the route
 * documents one), and every 4xx is SPEC's error envelope. The node runs every route
 * module against stand-ins: the localnet as the chain, Jupiter and the three pool venues.
 * FUZZ_SEED and FUZZ_RUNS (per route) override the defaults.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import {
  bodyFor, hostileJson, hostileString, malformedJson, mutateQuery, objectText, pct, plausible, plausibleQuery, queryFor, render, segmentFor,
} from './hostile.js';
import { checkoutSession } from './domain.js';
import { send, type RawRequest } from './raw-http.js';
import { ADMIN, fault, startFuzzNode, type FuzzNode, type Op, type Param } from './fuzz-node.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_121);
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 8);

/** `a` in `some` of `some + none` cases, else undefined */
const sometimes = <T>(a: fc.Arbitrary<T>, some: number, none: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: some, arbitrary: a }, { weight: none, arbitrary: fc.constant(undefined) });
const headerSafe = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('fuzz: every route from its schema', function () {
  this.timeout(120_000);
  let node: FuzzNode;
  let api: FuzzNode['api'];
  let net: FuzzNode['net'];
  let ops: Op[] = [];
  let gatewayJwt = '';
  let gateway = { address: '', authority: '' };
  const stats = new Map<string, Record<number, number>>();

  before(async () => {
    node = await startFuzzNode('fuzz');
    ({ api, net, ops, gatewayJwt, gateway } = node);
  });
  after(async () => { await node?.close(); });

  /** what the schema says, and for some parameters what it cannot say */
  function plausibleSegment(op: Op, p: Param): fc.Arbitrary<unknown> {
    if (op.path === '/v1/skill/{encoded}') return checkoutSession({ mints: net.fixtures.mints.map((m) => m.address), keys: [gateway.address, gateway.authority] });
    // a gateway's own addresses now and then, so that the signed-in gateway reaches its own resources
    if (typeof p.schema['pattern'] === 'string' && p.schema['pattern'].includes('1-9A-HJ-NP')) return fc.oneof(plausible(p.schema), fc.constantFrom(gateway.address, gateway.authority));
    return plausible(p.schema);
  }

  const auth = fc.constantFrom('none', 'admin', 'wrong-admin', 'gateway-jwt', 'garbage-bearer', 'basic', 'huge-bearer', 'both');
  const authHeaders = (kind: string): Record<string, string> => {
    switch (kind) {
      case 'admin': return { 'x-admin-key': ADMIN };
      case 'wrong-admin': return { 'x-admin-key': `${ADMIN}x` };
      case 'gateway-jwt': return { authorization: `Bearer ${gatewayJwt}` };
      case 'garbage-bearer': return { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' };
      case 'basic': return { authorization: 'Basic YWRtaW46YWRtaW4=' };
      case 'huge-bearer': return { authorization: `Bearer ${'a'.repeat(6000)}` };
      case 'both': return { 'x-admin-key': ADMIN, authorization: `Bearer ${gatewayJwt.slice(0, -4)}AAAA` };
      default: return {};
    }
  };
  const payment = fc.oneof(
    hostileString.map(headerSafe),
    hostileJson.map((v) => b64(JSON.stringify(v) ?? 'null')),
    fc.record({
      x402Version: fc.oneof(fc.constant(2), hostileJson), scheme: fc.constantFrom('deferred', 'x402://payg', 'exact', ''),
      network: fc.constantFrom('solana:localnet', 'solana:other'), id: hostileString,
      payload: fc.oneof(
        hostileJson,
        fc.uint8Array({ maxLength: 400 }).map((b) => ({ serializedTransaction: Buffer.from(b).toString('base64') })),
        // the payer's proof (issue 15): hostile proofs with a transaction, and the transaction-less form
        fc.record({
          serializedTransaction: fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b).toString('base64')),
          proof: fc.oneof(hostileJson, fc.record({ signedAt: fc.oneof(fc.integer(), hostileJson), signature: fc.oneof(hostileString, fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => bs58.encode(b))) })),
        }),
        fc.record({
          payer: fc.oneof(hostileString, fc.constantFrom(gateway.authority || '11111111111111111111111111111111', bs58.encode(new Uint8Array(32)))),
          proof: fc.oneof(hostileJson, fc.record({ signedAt: fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }), signature: fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => bs58.encode(b)) })),
        }),
      ),
    }).map((p) => b64(JSON.stringify(p))),
  ).filter((h) => h.length < 6000); // larger headers are refused by node itself (431) before the app sees them
  const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded',
    'application/json; charset=utf-7', 'multipart/form-data; boundary=x', 'application/merge-patch+json', 'application/json, text/plain', '*/*');

  /**
   * One request for the route: plausible throughout (validation passes, the route's code
   * runs on edge values), plausible with one hostile change, or hostile throughout.
   */
  function requestFor(op: Op): fc.Arbitrary<RawRequest> {
    const pathParams = op.params.filter((p) => p.in === 'path');
    const queryParams = op.params.filter((p) => p.in === 'query');
    const secured = /webhooks|admin|merchant/.test(op.path);
    const plain = fc.record({
      segments: fc.tuple(...pathParams.map((p) => plausibleSegment(op, p).map((v) => pct(String(v))))),
      pairs: plausibleQuery(queryParams),
      body: op.body ? plausible(op.body).map((v) => JSON.stringify(v)) : fc.constant(undefined),
      auth: secured ? fc.constantFrom('admin', 'gateway-jwt') : fc.constantFrom('none', 'none', 'gateway-jwt'),
    });
    const wild = fc.record({
      segments: fc.tuple(...pathParams.map((p) => segmentFor(p.schema))),
      query: queryFor(queryParams),
      body: sometimes(bodyFor(op.body), op.body ? 8 : 1, op.body ? 1 : 3),
      contentType,
      auth,
      payment,
      xff: hostileString.map(headerSafe),
      host: fc.constantFrom('evil.example', 'a b', '[::1]:99999', 'x'.repeat(300), 'localhost:0/../', '%00'),
    });
    const PARTS = ['segment', 'query', 'body', 'contentType', 'auth', 'payment', 'xff', 'host'] as const;
    const mode = fc.oneof(
      { weight: 4, arbitrary: fc.constant<{ kind: 'plain' } | { kind: 'one'; part: (typeof PARTS)[number] } | { kind: 'wild' }>({ kind: 'plain' }) },
      { weight: 4, arbitrary: fc.constantFrom(...PARTS).map((part) => ({ kind: 'one' as const, part })) },
      { weight: 2, arbitrary: fc.constant({ kind: 'wild' as const }) },
    );
    return fc.tuple(plain, wild, mode).chain(([p, w, m]) => {
      const hostile = (part: (typeof PARTS)[number]) => m.kind === 'wild' || (m.kind === 'one' && m.part === part);
      const query = m.kind === 'wild' ? fc.constant(w.query) : hostile('query') ? mutateQuery(p.pairs) : fc.constant(render(p.pairs));
      const segIndex = fc.nat({ max: Math.max(0, pathParams.length - 1) });
      return fc.tuple(query, segIndex).map(([q, si]) => {
        const segments = p.segments.map((seg, i) => (m.kind === 'wild' || (hostile('segment') && i === si) ? w.segments[i]! : seg));
        let i = 0;
        const path = op.path.replace(/\{[^}]+\}/g, () => segments[i++] ?? '');
        const body = hostile('body') ? w.body : p.body;
        const headers: Record<string, string> = { ...authHeaders(hostile('auth') ? w.auth : p.auth) };
        if (hostile('contentType')) headers['content-type'] = w.contentType;
        else if (body !== undefined) headers['content-type'] = 'application/json';
        // SPEC's Payment header or the standard's PAYMENT-SIGNATURE: every protected route reads both
        if (hostile('payment')) headers[w.payment.length % 2 === 0 ? 'payment' : 'payment-signature'] = w.payment;
        if (hostile('xff')) headers['x-forwarded-for'] = w.xff;
        if (hostile('host')) headers['host'] = w.host;
        return { method: op.method, path: `${path}${q}`, headers, ...(body !== undefined ? { body } : {}) };
      });
    });
  }

  it('lists the routes it fuzzes', () => {
    expect(ops.length).to.be.above(40);
    expect(ops.map((o) => `${o.method} ${o.path}`)).to.include.members(['GET /v1/events', 'POST /v1/webhooks', 'POST /v1/tokens/issue', 'POST /v1/tokens/challenge', 'GET /v1/x402/demo']);
  });

  it('answers every hostile request below 500, and every 4xx in the error envelope', async () => {
    let n = 0;
    for (const [k, op] of ops.entries()) {
      if (process.env["FUZZ_TRACE"]) console.log("op", op.method, op.path);
      const out = await fc.check(fc.asyncProperty(requestFor(op), async (req) => {
        if (process.env["FUZZ_TRACE"]) console.log(" req", req.method, req.path.slice(0, 200));
        n += 1;
        const res = await send(api.url, req);
        const f = fault(op, res);
        const h = stats.get(`${op.method} ${op.path}`) ?? {};
        h[res.status] = (h[res.status] ?? 0) + 1;
        stats.set(`${op.method} ${op.path}`, h);
        if (f) throw new Error(`${req.method} ${req.path.slice(0, 300)} ${JSON.stringify(req.headers).slice(0, 300)} ${String(req.body ?? '').slice(0, 300)} → ${f}`);
      }), { seed: SEED + k, numRuns: RUNS });
      // the shrunk counterexample, briefly (a full one can be megabytes)
      if (out.failed) expect.fail(`${op.method} ${op.path} (seed ${out.seed}, path ${out.counterexamplePath}): ${(out.errorInstance as Error | undefined)?.message ?? ''}`);
    }
    expect(n).to.be.at.least(ops.length * RUNS);
    // FUZZ_STATS=1 prints the answers per route: whether the inputs reach past validation
    if (process.env['FUZZ_STATS'] === '1') for (const [route, h] of stats) console.log(`${route.padEnd(48)} ${JSON.stringify(h)}`);
  });

  it('answers tokens/issue with a real wallet proof and hostile other fields below 500, in the envelope', async () => {
    const op = ops.find((o) => o.method === 'POST' && o.path === '/v1/tokens/issue')!;
    const wallet = net.fixtures.wallets[0]!;
    const secret = bs58.decode(wallet.secretKey).subarray(0, 32);
    const others = fc.record({
      walletPublicKey: sometimes(fc.oneof(hostileString, fc.constant(wallet.publicKey), fc.constant(bs58.encode(new Uint8Array(32)))), 1, 2),
      transactionSignature: sometimes(hostileString, 1, 2),
      tokenMint: sometimes(hostileString, 1, 3),
      trackingId: sometimes(hostileString, 1, 3),
      signatureForm: fc.constantFrom('ints', 'base58', 'hostile'),
      hostileSignature: hostileJson,
    });
    const out = await fc.check(fc.asyncProperty(others, async (o) => {
      const ch = await send(api.url, { method: 'POST', path: '/v1/tokens/challenge', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ walletPublicKey: wallet.publicKey }) });
      expect(ch.status, ch.text).to.equal(200);
      const { nonce } = ch.json as { nonce: string };
      const sig = await ed.signAsync(new TextEncoder().encode(nonce), secret);
      const signature = o.signatureForm === 'ints' ? Array.from(sig) : o.signatureForm === 'base58' ? bs58.encode(sig) : o.hostileSignature;
      const body: Record<string, unknown> = { nonce, signature };
      for (const k of ['walletPublicKey', 'transactionSignature', 'tokenMint', 'trackingId'] as const) if (o[k] !== undefined) body[k] = o[k];
      const res = await send(api.url, { method: 'POST', path: '/v1/tokens/issue', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const f = fault(op, res);
      if (f) throw new Error(`${JSON.stringify(body).slice(0, 400)} → ${f}`);
    }), { seed: SEED, numRuns: RUNS * 4 });
    if (out.failed) expect.fail(`tokens/issue with a proof (seed ${out.seed}, path ${out.counterexamplePath}): ${(out.errorInstance as Error | undefined)?.message ?? ''}`);
  });

  it('refuses malformed JSON, wrong content types and oversized bodies in the envelope', async () => {
    const writes = ops.filter((o) => o.body);
    expect(writes.length).to.be.at.least(4);
    const bodies = fc.sample(malformedJson, { seed: SEED, numRuns: 12 });
    for (const op of writes) {
      const path = op.path.replace(/\{[^}]+\}/g, '1');
      const cases: RawRequest[] = [
        ...bodies.map((body) => ({ method: op.method, path, headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN }, body })),
        { method: op.method, path, headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN }, body: `{"a":"${'x'.repeat(70_000)}"}` },
        { method: op.method, path, headers: { 'content-type': 'application/json; charset=latin-9', 'x-admin-key': ADMIN }, body: '{}' },
        { method: op.method, path, headers: { 'content-type': 'application/json', 'content-encoding': 'br', 'x-admin-key': ADMIN }, body: '{}' },
        { method: op.method, path, headers: { 'content-type': 'text/plain', 'x-admin-key': ADMIN }, body: 'hello' },
        { method: op.method, path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-admin-key': ADMIN }, body: 'a=1&__proto__[x]=1' },
        { method: op.method, path, headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN }, body: Buffer.from([0xff, 0xfe, 0x7b, 0x7d]) },
        { method: op.method, path, headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN },
          body: objectText([['__proto__', { polluted: 'yes' }], ['constructor', { prototype: { polluted: 'yes' } }]]) },
      ];
      for (const req of cases) {
        const res = await send(api.url, req);
        expect(res.status, `${req.method} ${req.path}`).to.be.within(400, 499);
        expect(fault(op, res), `${req.method} ${req.path} ${res.text.slice(0, 200)}`).to.equal(undefined);
      }
    }
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('answers unknown methods and paths with 404 in the envelope', async () => {
    const paths = [...new Set(ops.map((o) => o.path.replace(/\{[^}]+\}/g, 'x')))];
    for (const path of paths) {
      for (const method of ['PATCH', 'PUT', 'DELETE', 'POST', 'GET']) {
        if (ops.some((o) => o.method === method && o.path.replace(/\{[^}]+\}/g, 'x') === path)) continue;
        const res = await send(api.url, { method, path });
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(fault({ method, path, params: [], statuses: new Set() }, res)).to.equal(undefined);
      }
    }
    for (const path of ['/v1', '/v1/', '/%2e%2e/%2e%2e/etc/passwd', '/v1/events/%ff', '/v1//events', '/__proto__', '/v1/webhooks/%']) {
      const res = await send(api.url, { method: 'GET', path });
      expect(res.status, path).to.be.within(400, 499);
      expect(fault({ method: 'GET', path, params: [], statuses: new Set() }, res), path).to.equal(undefined);
    }
  });
});
