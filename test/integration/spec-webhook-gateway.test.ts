/**
 * SPEC.md "Webhook", to the letter: gateway_pubkey is the "gateway authority public key".
 * Our decision (docs/decisions.md): the gateway account's address is refused with a 400
 * that names the key expected, on POST /v1/webhooks and on GET/DELETE
 * /v1/webhooks/gateway/{gatewayPubkey}; a webhook registered under the authority is then
 * listed and deleted under that same key. The account is recognized from the gateway JWT
 * (its subject), else through the chain (a localnet started here) or, when the chain does
 * not answer, the gateways read model. Rows registered under an account before are moved
 * to its authority by migration 0990.
 */
import { createServer } from 'node:net';
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { makeEvent } from '../support/anchor-events.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { gatewaysProjection } from '../../projections/gateways/projection.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { up as moveToAuthority } from '../../infra/migrations/0990_webhooks_authority_key.js';
import { project } from './readmodels-scenario.js';

const ADMIN = 'admin-key-for-spec-gateway';
const SEED = 'spec-webhook-gateway';
const pda = createPdaDeriver(PROGRAM_ID);

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Reply { status: number; body: { error?: string; deleted?: number; id?: number; gateway_pubkey?: string }[] & { error?: string; deleted?: number; id?: number; gateway_pubkey?: string } }

describe('SPEC Webhook: gateway_pubkey is the gateway authority public key', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let ln: Localnet;
  let api: TestApi;
  let offChain: TestApi; // same database, its chain unreachable: the read model answers
  let authority: string; // the localnet's first fixture gateway
  let account: string;
  let token: string;
  let url = 0;
  const nextUrl = () => `https://8.8.8.8/hooks/${(url += 1)}`;

  async function call(node: TestApi, method: string, path: string, opts: { token?: string; admin?: boolean; body?: unknown } = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
    if (opts.admin) headers['x-admin-key'] = ADMIN;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${node.url}${path}`, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    return { status: res.status, body: (await res.json()) as Reply['body'] };
  }
  const refused = (r: Reply, field: string, expectedKey?: string) => {
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error).to.include(`${field} must be the gateway's authority public key, not the gateway account address`);
    if (expectedKey) expect(r.body.error).to.include(expectedKey);
  };

  before(async () => {
    env = await createTestEnv('spec_webhook_gateway');
    ln = await startLocalnet({ port: 0, seed: SEED, rate: 0 });
    const common = { ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: SEED, SOLANA_RPC_TIMEOUT_MS: '1000' };
    api = await startTestApi(env, { ...common, SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl }, { modules: [registerWebhookRoutes] });
    offChain = await startTestApi(env, { ...common, SOLANA_RPC_URL: `http://127.0.0.1:${await closedPort()}` }, { modules: [registerWebhookRoutes] });
    const g = ln.fixtures.gateways[0]!;
    authority = g.authority;
    account = g.address;
    expect(pda.gateway(authority)).to.equal(account);
    ({ token } = await api.node.keyRing.sign({ role: 'gateway', signer: authority }, { subject: account, expiresAt: Math.floor(Date.now() / 1000) + 3600 }));
  });
  after(async () => {
    await offChain?.close();
    await api?.close();
    await ln?.close();
    await env?.close();
  });

  it('POST /v1/webhooks with the gateway account as gateway_pubkey: 400 naming the authority key (gateway JWT and admin key)', async () => {
    refused(await call(api, 'POST', '/v1/webhooks', { token, body: { gateway_pubkey: account, endpoint_url: nextUrl() } }), 'gateway_pubkey', authority);
    refused(await call(api, 'POST', '/v1/webhooks', { admin: true, body: { gateway_pubkey: account, endpoint_url: nextUrl() } }), 'gateway_pubkey', authority);
    expect(await env.db.selectFrom('webhooks').select('id').where('gateway_pubkey', '=', account).execute()).to.deep.equal([]);
  });

  it('GET and DELETE /v1/webhooks/gateway/{gatewayPubkey} with the gateway account: 400 naming the authority key', async () => {
    for (const method of ['GET', 'DELETE']) {
      refused(await call(api, method, `/v1/webhooks/gateway/${account}`, { token }), 'gatewayPubkey', authority);
      refused(await call(api, method, `/v1/webhooks/gateway/${account}`, { admin: true }), 'gatewayPubkey', authority);
    }
  });

  it('registered under the authority key, a webhook is listed and deleted under that key', async () => {
    const created = await call(api, 'POST', '/v1/webhooks', { token, body: { gateway_pubkey: authority, endpoint_url: nextUrl() } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.gateway_pubkey).to.equal(authority);
    for (const auth of [{ token }, { admin: true }]) {
      const listed = await call(api, 'GET', `/v1/webhooks/gateway/${authority}`, auth);
      expect(listed.status).to.equal(200);
      expect(listed.body.map((w) => w.id)).to.deep.equal([created.body.id]);
    }
    const deleted = await call(api, 'DELETE', `/v1/webhooks/gateway/${authority}`, { token });
    expect(deleted.body).to.deep.equal({ deleted: 1 });
    expect((await call(api, 'GET', `/v1/webhooks/${created.body.id}`, { token })).status).to.equal(404);
  });

  it('without the chain, the gateways read model recognizes an account (admin key)', async () => {
    const other = Keypair.generate().publicKey.toBase58();
    await project(env, [gatewaysProjection], [makeEvent('PaymentGatewayCreated', { authority: other }, 'spec-gateway-rm')]);
    refused(await call(offChain, 'POST', '/v1/webhooks', { admin: true, body: { gateway_pubkey: pda.gateway(other), endpoint_url: nextUrl() } }), 'gateway_pubkey', other);
    refused(await call(offChain, 'GET', `/v1/webhooks/gateway/${pda.gateway(other)}`, { admin: true }), 'gatewayPubkey', other);
    expect((await call(offChain, 'POST', '/v1/webhooks', { admin: true, body: { gateway_pubkey: other, endpoint_url: nextUrl() } })).status).to.equal(201);
  });

  it('a key that is no gateway account is taken as an authority (admin key)', async () => {
    const fresh = Keypair.generate().publicKey.toBase58();
    const r = await call(api, 'POST', '/v1/webhooks', { admin: true, body: { gateway_pubkey: fresh, endpoint_url: nextUrl() } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.gateway_pubkey).to.equal(fresh);
  });

  it('migration 0990 moves webhooks registered under an account to its authority, unless the authority has that endpoint already', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const b = Keypair.generate().publicKey.toBase58();
    await project(env, [gatewaysProjection], [makeEvent('PaymentGatewayCreated', { authority: a }, 'mig-a'), makeEvent('PaymentGatewayCreated', { authority: b }, 'mig-b')]);
    const now = new Date();
    const row = (gatewayPubkey: string, endpoint: string) => ({
      gateway_pubkey: gatewayPubkey, gateway_account: pda.gateway(gatewayPubkey), endpoint_url: endpoint, active: true, secret: 'plain:AAAA', created_at: now, updated_at: now,
    });
    // as rows were written when the account was accepted: gateway_account = PDA of the account
    const legacy = await env.db.insertInto('webhooks').values([row(pda.gateway(a), 'https://8.8.8.8/a'), row(pda.gateway(b), 'https://8.8.8.8/b'), row(b, 'https://8.8.8.8/b')])
      .returning(['id', 'gateway_pubkey']).execute();
    await moveToAuthority(env.db);
    const after = await env.db.selectFrom('webhooks').select(['id', 'gateway_pubkey', 'gateway_account']).where('id', 'in', legacy.map((l) => l.id)).orderBy('id').execute();
    expect(after).to.deep.equal([
      { id: legacy[0]!.id, gateway_pubkey: a, gateway_account: pda.gateway(a) },
      { id: legacy[1]!.id, gateway_pubkey: pda.gateway(b), gateway_account: pda.gateway(pda.gateway(b)) }, // b has that endpoint already
      { id: legacy[2]!.id, gateway_pubkey: b, gateway_account: pda.gateway(b) },
    ]);
    const listed = await call(api, 'GET', `/v1/webhooks/gateway/${a}`, { admin: true });
    expect(listed.body.map((w) => w.id)).to.deep.equal([legacy[0]!.id]);
  });
});
