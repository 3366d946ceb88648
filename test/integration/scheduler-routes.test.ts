/**
 * /v1/gateway/{gateway}/scheduler: a merchant delegates execution without handing over its
 * authority key. POST answers a new signer and the unsigned change_gateway_signer
 * transaction; once the authority signs and sends it the gateway is active; GET shows the
 * state; DELETE stops it. Credentials and bad input get the error envelope.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import bs58 from 'bs58';
import { Keypair, Transaction } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerSchedulerRoutes } from '../../commands/scheduler/routes.js';
import { chainIo } from '../../commands/scheduler/chain.js';
import { syncGatewayStates } from '../../commands/scheduler/gateway-sync.js';
import { activeSigners } from '../../commands/scheduler/signers.js';

const ADMIN = 'scheduler-admin-key';

describe('scheduler delegation routes', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let ln: Localnet;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('sched-routes');
    ln = await startLocalnet({ port: 0, seed: 'sched-routes', rate: 0 });
    api = await startTestApi(env, { SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet', ADMIN_API_KEY: ADMIN }, { modules: [registerSigningRoutes, registerSchedulerRoutes] });
  });
  after(async () => { await api?.close(); await ln?.close(); await env?.close(); });

  const call = async (method: string, gateway: string, headers: Record<string, string> = { 'x-admin-key': ADMIN }) => {
    const res = await fetch(`${api.url}/v1/gateway/${gateway}/scheduler`, { method, headers });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('POST → the authority signs change_gateway_signer → active; GET shows it; DELETE stops it', async () => {
    const g = ln.fixtures.gateways[1]!;
    const created = await call('POST', g.address);
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body).to.include({ gateway: g.address, authority: g.authority, state: 'pending' });
    expect(created.body.signer).to.not.equal(g.authority);
    expect((await call('POST', g.address)).body.signer, 'a repeated POST answers the same signer').to.equal(created.body.signer);
    const row = await env.db.selectFrom('scheduler_gateways').select('secret').where('gateway', '=', g.address).executeTakeFirstOrThrow();
    expect(row.secret).to.not.include(created.body.signer);

    const tx = Transaction.from(Buffer.from(created.body.transaction as string, 'base64'));
    expect(tx.signatures.every((s) => s.signature === null), 'unsigned').to.equal(true);
    tx.partialSign(Keypair.fromSecretKey(bs58.decode(g.authoritySecretKey)));
    const rpc = createRpcClient({ url: ln.rpcUrl, timeoutMs: 5000 });
    await rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
    const io = chainIo(rpc, api.ctx.config.solana.programId, 'confirmed');
    expect(await syncGatewayStates(env.db, io)).to.include(g.address);
    expect((await activeSigners(env.db, undefined)).get(g.address)?.publicKey.toBase58(), 'the sealed key opens to the delegated signer').to.equal(created.body.signer);

    const state = await call('GET', g.address);
    expect(state.status).to.equal(200);
    expect(state.body).to.include({ state: 'active', signer: created.body.signer, due: 0, executed: 0, unsettledUsage: '0' });
    expect(state.body.signerLamports).to.equal(0);
    expect(state.body.lowBalance).to.equal(true);

    const stopped = await call('DELETE', g.address);
    expect(stopped.body).to.deep.equal({ gateway: g.address, state: 'stopped' });
    expect((await call('GET', g.address)).body.state).to.equal('stopped');
    expect(await syncGatewayStates(env.db, io)).to.not.include(g.address);
  });

  it('refuses without a credential (401), with a bad address (400), for an unknown gateway (404)', async () => {
    const g = ln.fixtures.gateways[2]!;
    const none = await call('POST', g.address, {});
    expect(none.status).to.equal(401);
    expect(none.body).to.include({ success: false });
    expect((await call('POST', 'not-a-key')).status).to.equal(400);
    const unknown = await call('POST', Keypair.generate().publicKey.toBase58());
    expect(unknown.status).to.equal(404);
    expect((await call('GET', g.address)).status).to.equal(404);
    expect((await call('DELETE', g.address)).status).to.equal(404);
  });
});
