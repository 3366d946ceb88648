/**
 * x402 discovery lists a resource only once its gateway proved control of the URL's origin
 * (a token the service issued, published at /.well-known/tributary-x402.txt and fetched by
 * the service behind the SSRF guard). URLs are normalized and only https (http on loopback
 * where allowed); a squatter's registration is stored but never listed and never blocks
 * the origin's owner; descriptions come back as the text they were.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { registerApiKeyRoutes } from '../../commands/api-keys/routes.js';
import { registerFacilitatorRoutes } from '../../commands/x402/facilitator/routes.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, type Answer } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const OWN = 'https://pay.tributary.example';
const XSS = '<img src=x onerror=alert(document.domain)>';

type Gw = { address: string; authority: string };
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A merchant's origin on loopback: serves what the test says at /.well-known/tributary-x402.txt, counts the requests. */
async function originServer(): Promise<{ server: Server; origin: string; serve(h: Handler): void; hits: () => number }> {
  let handler: Handler = (_req, res) => { res.writeHead(404).end(); };
  let hits = 0;
  const server = createServer((req, res) => {
    if (req.url === '/.well-known/tributary-x402.txt') hits += 1;
    if (req.url === '/elsewhere.txt' || req.url === '/.well-known/tributary-x402.txt') { handler(req, res); return; }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, serve(h) { handler = h; }, hits: () => hits };
}

const text = (body: string): Handler => (_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }).end(body); };

describe('x402 discovery: proof of control of the origin, normalized https URLs, text only', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let merchant: Awaited<ReturnType<typeof originServer>>;
  const keys = new Map<string, string>();
  let a: Gw;
  let b: Gw;
  let c: Gw;

  const keyOf = async (gw: Gw): Promise<string> => {
    const known = keys.get(gw.address);
    if (known) return known;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    const key: string = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    keys.set(gw.address, key);
    return key;
  };
  const register = async (gw: Gw, resource: string, extra: Record<string, unknown> = {}, base = h.api.url): Promise<Answer> =>
    call(base, 'PUT', '/v1/x402/resources', {
      resource, ...extra, accepts: [{
        scheme: 'x402://upto', network: 'solana:localnet', amount: '1000', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV, maxTimeoutSeconds: 600,
      }],
    }, { 'x-api-key': await keyOf(gw) });
  const verify = async (gw: Gw, origin: string, base = h.api.url): Promise<Answer> =>
    call(base, 'POST', '/v1/x402/resources/verify', { origin }, { 'x-api-key': await keyOf(gw) });
  const listed = async (): Promise<any[]> => (await call(h.api.url, 'GET', '/v1/x402/discovery/resources?limit=100')).body.items;

  before(async () => {
    h = await startX402('discovery-control', { PUBLIC_BASE_URL: OWN });
    const gws = h.ln.fixtures.gateways;
    [a, b, c] = [gws[0]!, gws[1]!, gws[2]!];
    merchant = await originServer();
  });
  after(async () => {
    merchant.server.closeAllConnections();
    await new Promise((r) => merchant.server.close(r));
    await h.close();
  });

  it('refuses javascript:, data:, http on a public host, credentials, fragments and the service\'s own origin with 400', async () => {
    for (const resource of [
      'javascript:alert(document.domain)//', 'data:text/html,<script>alert(1)</script>', 'http://merchant.example/report', 'ftp://merchant.example/report',
      'https://user:pass@merchant.example/report', 'https://merchant.example/report#pay-here', 'https://merchant.example/report#',
      `${OWN}/v1/x402/demo`, 'HTTPS://PAY.TRIBUTARY.EXAMPLE:443/anything', 'https://merchant.example/a\tb', 'not a url',
    ]) {
      const r = await register(a, resource, { description: 'the official demo' });
      expect(r.status, `${resource}: ${JSON.stringify(r.body)}`).to.equal(400);
      expect(r.body).to.include({ code: 'invalid_input', success: false });
      expect(r.body.error).to.contain('refused:');
    }
    expect(await h.env.db.selectFrom('x402_resources').select('resource').execute()).to.deep.equal([]);
  });

  it('stores one resource however its URL is spelled: case, default port, empty query, trailing dot, unicode host', async () => {
    const spellings = ['HTTPS://API.EXAMPLE/report', 'https://api.example/report?', 'https://api.example:443/report', 'https://Api.Example./report'];
    for (const s of spellings) {
      const r = await register(a, s);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.resource).to.equal('https://api.example/report');
      expect(r.body.accepts[0].resource).to.equal('https://api.example/report');
    }
    const rows = await h.env.db.selectFrom('x402_resources').select(['resource', 'origin']).where('origin', '=', 'https://api.example').execute();
    expect(rows).to.deep.equal([{ resource: 'https://api.example/report', origin: 'https://api.example' }]);
    expect((await register(a, 'https://bücher.example/a/%7e/../b')).body.resource).to.equal('https://xn--bcher-kva.example/a/b');
  });

  it('stores a squatter\'s registration unlisted; the gateway that proves the origin is listed with its own terms', async () => {
    const url = `${merchant.origin}/report`;
    const squat = await register(a, url, { description: 'the official report' });
    expect(squat.status, JSON.stringify(squat.body)).to.equal(200);
    expect(squat.body).to.include({ resource: url, verified: false, listed: false });
    expect(squat.body.proof).to.include({ origin: merchant.origin, url: `${merchant.origin}/.well-known/tributary-x402.txt` });
    expect((await listed()).map((i) => i.resource)).to.not.include(url);

    // the first registration no longer locks the URL
    const owner = await register(b, url, { description: 'the report' });
    expect(owner.status, JSON.stringify(owner.body)).to.equal(200);
    expect(owner.body).to.include({ verified: false, listed: false });
    expect(owner.body.proof.token).to.be.a('string').and.not.equal(squat.body.proof.token);

    merchant.serve(text(`# tokens of the gateways that sell here\n${owner.body.proof.token}\n`));
    const refused = await verify(a, merchant.origin);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.error).to.contain('(token_missing)');

    const proven = await verify(b, `${merchant.origin}/any/path`);
    expect(proven.status, JSON.stringify(proven.body)).to.equal(200);
    expect(proven.body).to.include({ origin: merchant.origin, verified: true });
    expect(proven.body.listed).to.deep.equal([url]);

    const items = (await listed()).filter((i) => i.resource === url);
    expect(items).to.have.length(1);
    expect(items[0].accepts[0]).to.include({ gateway: b.address, recipient: b.authority });
    expect(items[0].metadata.description).to.equal('the report');

    // the squatter registering again stays unlisted; the owner's next resource is listed at once
    expect((await register(a, url)).body).to.include({ verified: false, listed: false });
    const next = await register(b, `${merchant.origin}/news`);
    expect(next.body).to.include({ verified: true, listed: true });
    expect(next.body).to.not.have.property('proof');
    expect((await listed()).filter((i) => i.resource.startsWith(merchant.origin)).map((i) => i.accepts[0].gateway)).to.deep.equal([b.address, b.address]);
  });

  it('lets two gateways that both proved an origin list different URLs, and the second claim of one URL is a 409', async () => {
    const tokenB = (await register(b, `${merchant.origin}/report`)).body;
    expect(tokenB.listed).to.equal(true);
    const own = await register(c, `${merchant.origin}/c-only`);
    merchant.serve(text(`${own.body.proof.token}\r\nsomething else\r\n`));
    expect((await verify(c, merchant.origin)).status).to.equal(200);
    const taken = await register(c, `${merchant.origin}/report`);
    expect(taken.status, JSON.stringify(taken.body)).to.equal(409);
    expect(taken.body.code).to.equal('conflict');
    const mine = (await listed()).find((i) => i.resource === `${merchant.origin}/c-only`);
    expect(mine.accepts[0].gateway).to.equal(c.address);
    expect((await listed()).find((i) => i.resource === `${merchant.origin}/report`).accepts[0].gateway).to.equal(b.address);
  });

  it('proves nothing with a token file that is missing, wrong, redirected, too big or unreachable, and says why', async () => {
    const other = await originServer();
    try {
      const url = `${other.origin}/paid`;
      const { token } = (await register(a, url)).body.proof;
      const cases: [Handler, string][] = [
        [(_q, s) => { s.writeHead(404).end(); }, '(status)'],
        [text('tributary-x402-not-this-one\n'), '(token_missing)'],
        [text(`prefix ${token}\n`), '(token_missing)'],
        [(_q, s) => { s.writeHead(302, { location: '/elsewhere.txt' }).end(); }, '(redirect)'],
        [text(`${'#'.repeat(20_000)}\n${token}\n`), '(too_large)'],
        [(_q, s) => { s.writeHead(200); for (let i = 0; i < 40; i += 1) s.write('#'.repeat(1000) + '\n'); s.end(`${token}\n`); }, '(too_large)'],
        [(q) => { q.socket.destroy(); }, '(unreachable)'],
      ];
      for (const [handler, reason] of cases) {
        other.serve((q, s) => (q.url === '/elsewhere.txt' ? text(`${token}\n`)(q, s) : handler(q, s)));
        const r = await verify(a, other.origin);
        expect(r.status, `${reason}: ${JSON.stringify(r.body)}`).to.equal(400);
        expect(r.body.code).to.equal('invalid_input');
        expect(r.body.error).to.contain(reason);
      }
      expect((await listed()).map((i) => i.resource)).to.not.include(url);
      const proof = await h.env.db.selectFrom('x402_origin_proofs').select('verified_at').where('origin', '=', other.origin).executeTakeFirstOrThrow();
      expect(proof.verified_at).to.equal(null);
    } finally {
      other.server.closeAllConnections();
      await new Promise((r) => other.server.close(r));
    }
    // a closed port: the same outcome as any other network error
    const closed = await originServer();
    closed.server.close();
    await register(a, `${closed.origin}/paid`);
    const r = await verify(a, closed.origin);
    expect(r.status).to.equal(400);
    expect(r.body.error).to.contain('(unreachable)').and.not.match(/ECONN|socket/i);
    // no token issued for the origin: 404
    expect((await verify(a, 'https://never-registered.example')).status).to.equal(404);
  });

  it('fetches the token file through the SSRF guard: a loopback origin is refused where private targets are not allowed', async () => {
    let guarded: TestApi | undefined;
    try {
      guarded = await startTestApi(h.env, { ...h.overrides, PUBLIC_BASE_URL: OWN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, { modules: [registerFacilitatorRoutes, registerApiKeyRoutes] });
      const other = await originServer();
      try {
        const reg = await register(a, `${other.origin}/guarded`, {}, guarded.url);
        other.serve(text(`${reg.body.proof.token}\n`));
        const r = await verify(a, other.origin, guarded.url);
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(r.body.error).to.contain('(refused_target)');
        expect(other.hits()).to.equal(0);
        // a name that resolves to loopback is refused at connection time, by the socket's lookup
        const named = other.origin.replace('127.0.0.1', 'localhost');
        const byName = await register(a, `${named}/guarded`, {}, guarded.url);
        other.serve(text(`${reg.body.proof.token}\n${byName.body.proof.token}\n`));
        const refusedByName = await verify(a, named, guarded.url);
        expect(refusedByName.status, JSON.stringify(refusedByName.body)).to.equal(400);
        expect(refusedByName.body.error).to.contain('(refused_target)');
        expect(other.hits()).to.equal(0);
        // the same file through a node that allows private targets proves it
        expect((await verify(a, other.origin)).status).to.equal(200);
        expect(other.hits()).to.equal(1);
      } finally {
        other.server.closeAllConnections();
        await new Promise((r) => other.server.close(r));
      }
    } finally {
      await guarded?.close();
    }
  });

  it('refuses http on loopback where X402_DISCOVERY_ALLOW_HTTP_LOOPBACK is off', async () => {
    const strict = await startTestApi(h.env, { ...h.overrides, X402_DISCOVERY_ALLOW_HTTP_LOOPBACK: 'false' }, { modules: [registerFacilitatorRoutes, registerApiKeyRoutes] });
    try {
      const r = await register(a, `${merchant.origin}/report`, {}, strict.url);
      expect(r.status).to.equal(400);
      expect(r.body.error).to.contain('X402_DISCOVERY_ALLOW_HTTP_LOOPBACK');
      expect((await register(a, 'https://merchant.example/report', {}, strict.url)).status).to.equal(200);
    } finally {
      await strict.close();
    }
  });

  it('limits the checks per gateway: each is an outbound request', async () => {
    const limited = await startTestApi(h.env, {
      ...h.overrides, RATE_LIMIT_X402_VERIFY_PER_MINUTE: '2', REDIS_PREFIX: `${h.env.env['REDIS_PREFIX'] ?? 'tributary:'}verify-limit:`,
    }, { modules: [registerFacilitatorRoutes, registerApiKeyRoutes] });
    try {
      const tokens = await h.env.db.selectFrom('x402_origin_proofs').select('token').where('origin', '=', merchant.origin).execute();
      merchant.serve(text(tokens.map((t) => `${t.token}\n`).join('')));
      const before = merchant.hits();
      const first = await verify(c, merchant.origin, limited.url);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect((await verify(c, merchant.origin, limited.url)).status).to.equal(200);
      const third = await verify(c, merchant.origin, limited.url);
      expect(third.status).to.equal(429);
      expect(third.body.code).to.equal('rate_limited');
      expect(merchant.hits()).to.equal(before + 2);
      // another gateway has its own budget
      expect((await verify(b, merchant.origin, limited.url)).status).to.equal(200);
    } finally {
      await limited.close();
    }
  });

  it('answers descriptions and metadata as the text they were, never as markup', async () => {
    const url = `${merchant.origin}/markup`;
    const r = await register(b, url, { description: XSS, input: { method: 'GET', note: '<script>alert(1)</script>' } });
    expect(r.status).to.equal(200);
    const res = await fetch(`${h.api.url}/v1/x402/discovery/resources?limit=100`);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const item = ((await res.json()) as any).items.find((i: any) => i.resource === url);
    expect(item.metadata).to.deep.equal({ description: XSS, input: { method: 'GET', note: '<script>alert(1)</script>' } });
  });
});
