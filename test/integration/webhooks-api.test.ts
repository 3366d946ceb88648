/**
 * /v1/webhooks as a gateway and an administrator use it: credentials, validation, the
 * secret shown once, state transitions, deletes, pagination, and SSRF targets refused
 * at creation (WEBHOOK_ALLOW_PRIVATE_TARGETS off, as in production).
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { Clock } from '../../src/kernel/domain/clock.js';

const ADMIN = 'admin-key-for-webhook-tests';
const pda = createPdaDeriver(PROGRAM_ID);

interface Gateway { authority: string; account: string; token: string }

describe('webhooks API', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;
  let t = Date.parse('2026-03-01T00:00:00Z');
  const clock: Clock = { now: () => t };
  let gw: Gateway;
  let other: Gateway;

  async function gateway(): Promise<Gateway> {
    const authority = Keypair.generate().publicKey.toBase58();
    const account = pda.gateway(authority);
    // gateway JWTs are honoured only for a gateway that exists (checked at use): the read model has it
    await env.db.insertInto('gateways').values({
      address: account, authority, signer: authority, fee_recipient: authority, fee_bps: 100, name: 'test', url: 'https://example.com',
      active: true, deleted: false, created_at: 1, updated_at: 1, deleted_at: null, created_slot: 1, created_signature: '1'.repeat(88),
    }).execute();
    const { token } = await api.node.keyRing.sign({ role: 'gateway', signer: authority }, { subject: account, expiresAt: Math.floor(t / 1000) + 3600 });
    return { authority, account, token };
  }

  async function call(method: string, path: string, opts: { token?: string; admin?: boolean; body?: unknown } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
    if (opts.admin) headers['x-admin-key'] = ADMIN;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${api.url}${path}`, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  const create = (g: Gateway, endpoint_url: string, extra: Record<string, unknown> = {}) =>
    call('POST', '/v1/webhooks', { token: g.token, body: { gateway_pubkey: g.authority, endpoint_url, ...extra } });

  function expectError(r: { status: number; body: unknown }, status: number, pattern?: RegExp) {
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    const b = r.body as { error: string; success: boolean; timestamp: number };
    expect(b.success).to.equal(false);
    expect(b.error).to.be.a('string');
    expect(b.timestamp).to.be.a('number');
    if (pattern) expect(b.error).to.match(pattern);
  }

  before(async () => {
    env = await createTestEnv('webhooks_api');
    // no chain: the gateway JWTs' gateways come from the read model
    api = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:1', ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_MAX_PER_GATEWAY: '10', SIGNING_KEY_ENCRYPTION_KEY: 'ab'.repeat(32) }, { clock, modules: [registerWebhookRoutes] });
    gw = await gateway();
    other = await gateway();
  });
  after(async () => {
    await api.close();
    await env.close();
  });

  describe('creating', () => {
    it('registers a webhook under the authority with the gateway JWT, secret shown once', async () => {
      const r = await create(gw, 'https://8.8.8.8/hooks/tributary');
      expect(r.status).to.equal(201);
      expect(r.headers.get('location')).to.equal(`/v1/webhooks/${r.body.id}`);
      expect(r.body).to.include({ gateway_pubkey: gw.authority, endpoint_url: 'https://8.8.8.8/hooks/tributary', active: true });
      expect(r.body.id).to.be.a('number');
      expect(r.body.created_at).to.equal(new Date(t).toISOString());
      expect(r.body.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(r.body.secret.slice(6), 'base64')).to.have.length(32);
      const again = await call('GET', `/v1/webhooks/${r.body.id}`, { token: gw.token });
      expect(again.status).to.equal(200);
      expect(again.body).to.not.have.property('secret');
      const row = await env.db.selectFrom('webhooks').select('secret').where('id', '=', r.body.id).executeTakeFirstOrThrow();
      expect(row.secret).to.match(/^aes-256-gcm:v1:/); // encrypted at rest
      expect(row.secret).to.not.contain(r.body.secret.slice(6, 30));
    });

    it('refuses the gateway account as gateway_pubkey (the authority key is expected); accepts the admin key for any gateway, and active=false', async () => {
      const byAccount = await call('POST', '/v1/webhooks', { token: gw.token, body: { gateway_pubkey: gw.account, endpoint_url: 'http://8.8.4.4/a' } });
      expectError(byAccount, 400, /authority public key/);
      expect((await create(gw, 'http://8.8.4.4/a')).status).to.equal(201);
      const byAdmin = await call('POST', '/v1/webhooks', { admin: true, body: { gateway_pubkey: other.authority, endpoint_url: 'http://8.8.4.4/b', active: false } });
      expect(byAdmin.status).to.equal(201);
      expect(byAdmin.body.active).to.equal(false);
    });

    it('refuses missing, wrong and foreign credentials', async () => {
      expectError(await call('POST', '/v1/webhooks', { body: { gateway_pubkey: gw.authority, endpoint_url: 'https://8.8.8.8/x' } }), 401);
      expectError(await call('POST', '/v1/webhooks', { token: 'not.a.jwt', body: { gateway_pubkey: gw.authority, endpoint_url: 'https://8.8.8.8/x' } }), 401);
      expectError(await create(other, 'https://8.8.8.8/x', { gateway_pubkey: gw.authority }), 403);
      const wrongAdmin = await fetch(`${api.url}/v1/webhooks`, { method: 'POST', headers: { 'x-admin-key': 'nope', 'content-type': 'application/json' }, body: JSON.stringify({ gateway_pubkey: gw.authority, endpoint_url: 'https://8.8.8.8/x' }) });
      expect(wrongAdmin.status).to.equal(401);
    });

    it('validates gateway_pubkey and endpoint_url', async () => {
      const bad = async (body: Record<string, unknown>, pattern?: RegExp) => expectError(await call('POST', '/v1/webhooks', { admin: true, body }), 400, pattern);
      const url = 'https://8.8.8.8/x';
      await bad({ endpoint_url: url }, /gateway_pubkey/);
      await bad({ gateway_pubkey: gw.authority }, /endpoint_url/);
      await bad({ gateway_pubkey: 'O0Il'.repeat(10), endpoint_url: url });
      await bad({ gateway_pubkey: bs58.encode(Buffer.alloc(31, 7)), endpoint_url: url }, /32-byte/);
      await bad({ gateway_pubkey: bs58.encode(Buffer.alloc(33, 7)), endpoint_url: url }, /gateway_pubkey/);
      await bad({ gateway_pubkey: gw.authority, endpoint_url: 'ftp://8.8.8.8/x' });
      await bad({ gateway_pubkey: gw.authority, endpoint_url: 'not a url' });
      await bad({ gateway_pubkey: gw.authority, endpoint_url: 'http://' });
      await bad({ gateway_pubkey: gw.authority, endpoint_url: 'https://user:pw@8.8.8.8/x' }, /credentials/);
      await bad({ gateway_pubkey: gw.authority, endpoint_url: url, active: 'yes' });
      await bad({ gateway_pubkey: gw.authority, endpoint_url: url, extra: 1 });
      const notJson = await fetch(`${api.url}/v1/webhooks`, { method: 'POST', headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' }, body: '{' });
      expect(notJson.status).to.equal(400);
    });

    it('refuses targets on private, loopback, link-local and metadata addresses', async () => {
      for (const target of [
        'http://127.0.0.1:8080/x', 'http://localhost/x', 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/x',
        'http://192.168.1.10/x', 'http://172.16.0.1/x', 'http://0.0.0.0/x', 'http://100.100.100.200/x', 'http://[::1]/x',
        'http://[fd00::1]/x', 'http://[fd00:ec2::254]/x', 'http://[fe80::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://2130706433/x',
      ]) {
        const r = await call('POST', '/v1/webhooks', { admin: true, body: { gateway_pubkey: gw.authority, endpoint_url: target } });
        expectError(r, 400, /refused/);
      }
    });

    it('answers 409 for the same endpoint twice', async () => {
      expectError(await create(gw, 'https://8.8.8.8/hooks/tributary'), 409);
    });

    it('answers 409 past WEBHOOK_MAX_PER_GATEWAY webhooks, even when created at once', async () => {
      const busy = await gateway();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => create(busy, `https://8.8.8.8/many/${i}`)));
      expect(results.filter((r) => r.status === 201)).to.have.length(10);
      for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, /WEBHOOK_MAX_PER_GATEWAY/);
      await call('DELETE', `/v1/webhooks/gateway/${busy.authority}`, { token: busy.token });
    });
  });

  describe('reading, updating, deleting', () => {
    let id: number;
    before(async () => {
      id = (await create(gw, 'https://1.1.1.1/read')).body.id as number;
    });

    it('reads one webhook for its gateway or the admin; 403 for another gateway, 404 unknown, 400 malformed', async () => {
      expect((await call('GET', `/v1/webhooks/${id}`, { token: gw.token })).body.endpoint_url).to.equal('https://1.1.1.1/read');
      expect((await call('GET', `/v1/webhooks/${id}`, { admin: true })).status).to.equal(200);
      expectError(await call('GET', `/v1/webhooks/${id}`, { token: other.token }), 403);
      expectError(await call('GET', `/v1/webhooks/${id}`), 401);
      expectError(await call('GET', '/v1/webhooks/999999', { admin: true }), 404);
      expectError(await call('GET', '/v1/webhooks/abc', { admin: true }), 400);
      expectError(await call('GET', '/v1/webhooks/0', { admin: true }), 400);
    });

    it('deactivates and reactivates, moving updated_at', async () => {
      t += 60_000;
      const off = await call('PUT', `/v1/webhooks/${id}`, { token: gw.token, body: { active: false } });
      expect(off.status).to.equal(200);
      expect(off.body.active).to.equal(false);
      expect(off.body.updated_at).to.equal(new Date(t).toISOString());
      expect(off.body.created_at).to.not.equal(off.body.updated_at);
      t += 60_000;
      const on = await call('PUT', `/v1/webhooks/${id}`, { admin: true, body: { active: true } });
      expect(on.body.active).to.equal(true);
      expect(on.body.updated_at).to.equal(new Date(t).toISOString());
      expectError(await call('PUT', `/v1/webhooks/${id}`, { token: gw.token, body: {} }), 400, /active/);
      expectError(await call('PUT', `/v1/webhooks/${id}`, { token: gw.token, body: { active: 'maybe' } }), 400);
      expectError(await call('PUT', `/v1/webhooks/${id}`, { token: other.token, body: { active: false } }), 403);
      expectError(await call('PUT', '/v1/webhooks/999999', { admin: true, body: { active: false } }), 404);
    });

    it('lists a gateway\'s webhooks (its JWT or admin) with active_only', async () => {
      await call('PUT', `/v1/webhooks/${id}`, { token: gw.token, body: { active: false } });
      const all = await call('GET', `/v1/webhooks/gateway/${gw.authority}`, { token: gw.token });
      expect(all.status).to.equal(200);
      expect(all.body.map((w: { gateway_pubkey: string }) => w.gateway_pubkey)).to.satisfy((a: string[]) => a.every((g) => g === gw.authority));
      const ids = all.body.map((w: { id: number }) => w.id);
      expect(ids).to.include(id);
      expect(ids).to.deep.equal([...ids].sort((a: number, b: number) => a - b));
      const active = await call('GET', `/v1/webhooks/gateway/${gw.authority}?active_only=true`, { admin: true });
      expect(active.body.map((w: { id: number }) => w.id)).to.not.include(id);
      expect(active.body.every((w: { active: boolean }) => w.active)).to.equal(true);
      expectError(await call('GET', `/v1/webhooks/gateway/${gw.authority}`, { token: other.token }), 403);
      expectError(await call('GET', `/v1/webhooks/gateway/${gw.authority}?active_only=maybe`, { token: gw.token }), 400);
      expectError(await call('GET', `/v1/webhooks/gateway/${bs58.encode(Buffer.alloc(31, 1))}`, { admin: true }), 400);
    });

    it('lists every webhook with the admin key only, paginated (limit 100 and offset 0 by default)', async () => {
      const all = await call('GET', '/v1/webhooks', { admin: true });
      expect(all.status).to.equal(200);
      expect(all.body.length).to.be.greaterThan(3);
      const page = await call('GET', '/v1/webhooks?limit=2&offset=1', { admin: true });
      expect(page.body).to.deep.equal(all.body.slice(1, 3));
      const active = await call('GET', '/v1/webhooks?active_only=true', { admin: true });
      expect(active.body.length).to.be.lessThan(all.body.length);
      expectError(await call('GET', '/v1/webhooks', { token: gw.token }), 401);
      expectError(await call('GET', '/v1/webhooks?limit=0', { admin: true }), 400);
      expectError(await call('GET', '/v1/webhooks?limit=100000000', { admin: true }), 400);
      expectError(await call('GET', '/v1/webhooks?offset=-1', { admin: true }), 400);
      expectError(await call('GET', '/v1/webhooks?color=red', { admin: true }), 400);
    });

    it('lists no delivery attempts yet; 404 for an unknown webhook', async () => {
      const r = await call('GET', `/v1/webhooks/${id}/deliveries`, { token: gw.token });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal([]);
      expectError(await call('GET', '/v1/webhooks/999999/deliveries', { admin: true }), 404);
      expectError(await call('GET', `/v1/webhooks/${id}/deliveries`, { token: other.token }), 403);
    });

    it('deletes one webhook: {deleted: 1}, then 404', async () => {
      expectError(await call('DELETE', `/v1/webhooks/${id}`, { token: other.token }), 403);
      const r = await call('DELETE', `/v1/webhooks/${id}`, { token: gw.token });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ deleted: 1 });
      expectError(await call('GET', `/v1/webhooks/${id}`, { admin: true }), 404);
      expectError(await call('DELETE', `/v1/webhooks/${id}`, { admin: true }), 404);
    });

    it('deletes every webhook of a gateway and nothing else', async () => {
      await create(gw, 'https://1.1.1.1/one');
      await create(gw, 'https://1.1.1.1/two');
      const before = (await call('GET', `/v1/webhooks/gateway/${gw.authority}`, { token: gw.token })).body.length as number;
      const others = (await call('GET', `/v1/webhooks/gateway/${other.authority}`, { admin: true })).body;
      expect(before).to.be.greaterThan(1);
      expectError(await call('DELETE', `/v1/webhooks/gateway/${gw.authority}`, { token: other.token }), 403);
      const r = await call('DELETE', `/v1/webhooks/gateway/${gw.authority}`, { token: gw.token });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ deleted: before });
      expect((await call('GET', `/v1/webhooks/gateway/${gw.authority}`, { token: gw.token })).body).to.deep.equal([]);
      expect((await call('GET', `/v1/webhooks/gateway/${other.authority}`, { admin: true })).body).to.deep.equal(others);
      expect((await call('DELETE', `/v1/webhooks/gateway/${gw.authority}`, { token: gw.token })).body).to.deep.equal({ deleted: 0 });
    });
  });

  it('publishes the routes, the DELETE bodies and the pagination defaults in /openapi.yaml', async () => {
    const doc = await (await fetch(`${api.url}/openapi.yaml`)).text();
    for (const p of ['/v1/webhooks:', '/v1/webhooks/{id}:', '/v1/webhooks/gateway/{gatewayPubkey}:', '/v1/webhooks/{id}/deliveries:']) expect(doc).to.contain(p);
    expect(doc).to.contain('number of webhooks removed');
    expect(doc).to.contain('page size (default 100');
  });
});
