/**
 * Issue 41, findings 5 and 6. An endpoint URL with a control character is refused with 400
 * (the URL parser strips some of them, PostgreSQL refuses a NUL: it once answered 500), and
 * the URL is stored and compared in its parsed form, so spellings of one URL are one
 * endpoint. The /test tool answers only classified outcomes: delivered, refused with the
 * receiver's status, or unreachable: one answer for every network error (a closed port, a
 * port that hangs up, a timeout), so it cannot tell closed ports from open ones; and it is
 * rate-limited per gateway.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { sql } from 'kysely';
import { startHarness, type Harness } from '../support/webhook-harness.js';

/** a listener that accepts connections and `act`s on each socket */
async function tcp(act: (s: net.Socket) => void): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => { sockets.add(s); act(s); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

describe('webhooks: hostile endpoint URLs and the test tool (issue 41)', function () {
  this.timeout(60_000);
  let h: Harness;

  before(async () => { h = await startHarness('webhooks_hostile', { WEBHOOK_TIMEOUT_MS: '300' }); });
  after(async () => { await h.close(); });

  it('refuses control characters and surrounding whitespace in endpoint_url with 400, storing nothing', async () => {
    const g = h.gateway();
    for (const url of ['http://8.8.8.8/\u0000', 'http://8.8.8.8/\t', 'http://8.8.8.8/a\nb', 'http://8.8.8.8/\u007f', 'http://8.8.8.8/\u001b[0m',
      ' http://8.8.8.8/', 'http://8.8.8.8/ ', 'http://8.8.8.8/\r\n', 'http://8.8.\t8.8/', 'http://8.8.8.8/\u0085']) {
      const r = await h.call('POST', '/v1/webhooks', { gateway_pubkey: g.authority, endpoint_url: url });
      expect(r.status, `${JSON.stringify(url)}: ${JSON.stringify(r.body)}`).to.equal(400);
      expect(r.body).to.include({ success: false, code: 'invalid_input' });
    }
    const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM webhooks WHERE gateway_pubkey = ${g.authority}`.execute(h.env.db);
    expect(rows[0]!.n).to.equal('0');
  });

  it('stores the parsed URL, and counts spellings of one URL as one endpoint (409)', async () => {
    const g = h.gateway();
    const made = await h.call('POST', '/v1/webhooks', { gateway_pubkey: g.authority, endpoint_url: 'HTTP://127.0.0.1:80/hook/../in' });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.body.endpoint_url).to.equal('http://127.0.0.1/in');
    for (const same of ['http://127.0.0.1/in', 'http://127.0.0.1:80/in', 'http://127.0.0.1/./in']) {
      const again = await h.call('POST', '/v1/webhooks', { gateway_pubkey: g.authority, endpoint_url: same });
      expect(again.status, same).to.equal(409);
    }
    const listed = await h.call('GET', `/v1/webhooks/gateway/${g.authority}`);
    expect(listed.body.map((w: { endpoint_url: string }) => w.endpoint_url)).to.deep.equal(['http://127.0.0.1/in']);
  });

  it('answers the test tool with one outcome for every network error, with no error code or latency', async () => {
    const g = h.gateway();
    const closed = await tcp((s) => s.destroy());
    const closedUrl = closed.url;
    await closed.close(); // nothing listens there now: connection refused
    const hangsUp = await tcp((s) => { s.once('data', () => s.destroy()); });
    const silent = await tcp(() => undefined); // accepts, never answers: the timeout
    const answers = [];
    for (const url of [closedUrl, hangsUp.url, silent.url, 'http://does-not-exist.invalid/hook']) {
      const hook = await h.register(g.authority, url);
      const r = await h.call('POST', `/v1/webhooks/${hook.id}/test`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const { deliveryId: _d, eventId: _e, ...rest } = r.body as Record<string, unknown>;
      answers.push(rest);
      const attempts = (await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body as { error: string | null; latencyMs: number; statusCode: number | null }[];
      expect(attempts).to.have.length(1);
      expect(attempts[0]!.error).to.equal(rest['error']);
      expect(attempts[0]!.latencyMs, url).to.equal(0);
    }
    await Promise.all([hangsUp.close(), silent.close()]);
    expect(answers[0]).to.deep.equal({ outcome: 'unreachable', success: false, statusCode: null, latencyMs: null, error: 'the endpoint could not be reached' });
    for (const a of answers) expect(a).to.deep.equal(answers[0]);
    expect(JSON.stringify(answers)).to.not.match(/ECONN|closed|socket|timeout|ENOTFOUND|EAI_/i);
  });

  it('answers delivered with the status, and refused with the receiver\'s status', async () => {
    const g = h.gateway();
    let status = 204;
    const r = await h.receiver(() => status);
    const hook = await h.register(g.authority, r.url);
    const ok = await h.call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(ok.body).to.include({ outcome: 'delivered', success: true, statusCode: 204, error: null });
    expect(ok.body.latencyMs).to.be.a('number');
    status = 503;
    const no = await h.call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(no.body).to.include({ outcome: 'refused', success: false, statusCode: 503, error: 'HTTP 503' });
  });

  it('allows 10 tests a minute per gateway, then answers 429 with Retry-After in the envelope', async () => {
    const g = h.gateway();
    const other = h.gateway();
    const r = await h.receiver(() => 200);
    const hook = await h.register(g.authority, r.url);
    const theirs = await h.register(other.authority, r.url);
    for (let i = 0; i < 10; i += 1) expect((await h.call('POST', `/v1/webhooks/${hook.id}/test`)).status, `test ${i + 1}`).to.equal(200);
    const res = await fetch(`${h.api.url}/v1/webhooks/${hook.id}/test`, { method: 'POST', headers: { 'x-admin-key': 'admin-key-for-webhook-harness' } });
    expect(res.status).to.equal(429);
    expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
    expect(await res.json()).to.include({ success: false, code: 'rate_limited' });
    expect(r.requests.length).to.equal(10);
    // another gateway's budget is its own
    expect((await h.call('POST', `/v1/webhooks/${theirs.id}/test`)).status).to.equal(200);
  });
});
