/**
 * Reconciliation against the localnet: a subscription paid by the scheduler and
 * pay-as-you-go usage charged by the settler reconcile with zero differences (the route,
 * the CLI as a process, /metrics); then a double charge sent behind the service's back
 * (an execute_payment signed by the gateway's signer, as the settler builds it, with
 * another compute limit so it is its own transaction) is reported as exactly that one
 * difference, `duplicated`, with its signature, by the route, the CLI and /metrics.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { ComputeBudgetProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { payAndFetch } from '../../src/app/index.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerApiKeyRoutes } from '../../commands/api-keys/routes.js';
import { registerReconciliationRoutes, startPeriodicReconciliation } from '../../src/app/reconciliation.js';
import { reconciliationKey } from '../../queries/reconciliation/published.js';
import { latestBlockhash, readExecutionContext, signExecution } from '../../commands/scheduler/chain.js';
import { runCli, waitFor } from '../support/process.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { expectError } from './auth-fixtures.js';
import { call, gatewayJwt } from './x402-facilitator-support.js';
import { DEMO_PATH } from './x402-harness.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;

describe('reconciliation: the chain against the service\'s ledgers', function () {
  this.timeout(240_000);
  let s: SchedulerHarness;
  let api: TestApi;
  let env: Record<string, string>;
  let jwt = '';
  let subscription = '';
  let payg = '';
  const since = Math.floor(Date.now() / 1000) - 60;

  const indexed = async (policy: string) => (await s.h.env.db.selectFrom('payments').select('signature').where('policy', '=', policy).execute()).length;
  const reconcileRoute = (headers: Record<string, string>, query = `?since=${since}`) =>
    call(api.url, 'GET', `/v1/gateway/${s.gateway}/reconciliation${query}`, undefined, headers);
  const metric = async (cause: string): Promise<number> => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const m = new RegExp(`^tributary_reconciliation_differences\\{cause="${cause}"\\} (\\d+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };

  before(async () => {
    s = await startSchedulerHarness('reconcile', {
      X402_DEMO_FREQUENCY: 'Custom:5', ...demoPaygEnv(PRICE, 500),
    });
    const overrides = { ...s.h.overrides, SOLANA_RPC_URL: s.h.ln.rpcUrl };
    api = await startTestApi(s.h.env, overrides, { modules: [registerSigningRoutes, registerApiKeyRoutes, registerReconciliationRoutes] });
    env = { ...s.h.env.env, ...overrides, LOG_LEVEL: 'silent' };
    jwt = await gatewayJwt({ ...s.h, api }, s.gateway, s.authority);

    const scheduler = s.scheduler();
    const settler = s.settler();
    const sub = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    subscription = sub.paid!.policy!;
    const metered = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    payg = metered.paid!.policy!;
    for (let i = 0; i < 3; i += 1) {
      const r = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${metered.paid!.jwt}` } });
      expect(r.status).to.equal(200);
    }
    await waitFor(async () => s.records(subscription).length >= 2, 40_000, 'a period paid by the scheduler');
    await waitFor(async () => s.records(payg).reduce((a, r) => a + r.amount, 0n) === 4n * PRICE, 30_000, 'every metered request charged');
    await scheduler.stop();
    await settler.stop();
    await waitFor(async () => (await indexed(subscription)) === s.records(subscription).length && (await indexed(payg)) === s.records(payg).length, 20_000, 'every payment indexed');
  });
  after(async () => { await api?.close(); await s?.close(); });

  it('a healthy run: the subscription and the metered usage reconcile with zero differences (route, /metrics, CLI)', async () => {
    const r = await reconcileRoute({ authorization: `Bearer ${jwt}` });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.differences, JSON.stringify(r.body.data.differences, null, 1)).to.deep.equal([]);
    expect(r.body.data.counts).to.deep.equal({ in_doubt: 0, unbillable: 0, lost: 0, duplicated: 0 });
    expect(r.body.data.payments, 'both policies\' payments were compared').to.be.at.least(s.records(subscription).length + s.records(payg).length);
    expect(r.body.data.records, 'the scheduler\'s intents and the settler\'s charges were compared').to.be.at.least(2);
    expect(await metric('duplicated')).to.equal(0);

    const cli = await runCli(['reconcile', '--gateway', s.gateway, '--since', String(since)], env);
    expect(cli.code, cli.output).to.equal(0);
    expect(cli.output).to.include('differences: 0');
  });

  it('a double charge behind the service\'s back is exactly one difference, duplicated, with its signature (route, API key, CLI, /metrics)', async () => {
    const before = s.records(payg).length;
    const ctx = await readExecutionContext(s.io, payg);
    if ('class' in ctx) throw new Error(ctx.reason);
    const signed = signExecution(s.io, ctx, s.signer, await latestBlockhash(s.io), PRICE);
    const tx = Transaction.from(Buffer.from(signed.wire, 'base64'));
    tx.instructions[0] = ComputeBudgetProgram.setComputeUnitLimit({ units: 250_007 });
    tx.signatures = [];
    tx.sign(s.signer);
    const duplicate = bs58.encode(tx.signature!);
    expect(duplicate).to.not.equal(signed.signature);
    await s.io.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64', preflightCommitment: 'confirmed' }]);
    await waitFor(async () => s.records(payg).length === before + 1, 20_000, 'the duplicate landed');
    expect(s.records(payg).at(-1)!.signature).to.equal(duplicate);
    await waitFor(async () => (await indexed(payg)) === before + 1, 20_000, 'the duplicate indexed');

    const r = await reconcileRoute({ authorization: `Bearer ${jwt}` });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.counts).to.deep.equal({ in_doubt: 0, unbillable: 0, lost: 0, duplicated: 1 });
    expect(r.body.data.differences).to.have.length(1);
    expect(r.body.data.differences[0]).to.deep.include({
      cause: 'duplicated', gateway: s.gateway, policy: payg, source: 'chain', chainAmount: PRICE.toString(), signatures: [duplicate],
    });
    expect(await metric('duplicated')).to.equal(1);

    const created = await call(api.url, 'POST', `/v1/gateway/${s.gateway}/api-keys`, { label: 'ops' }, { authorization: `Bearer ${jwt}` });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const byKey = await reconcileRoute({ 'x-api-key': created.body.key });
    expect(byKey.status).to.equal(200);
    expect(byKey.body.data.differences.map((d: any) => [d.cause, d.signatures])).to.deep.equal([['duplicated', [duplicate]]]);

    // every served gateway (the fixture gateway is the one delegated), as JSON
    const json = await runCli(['reconcile', '--since', String(since), '--json'], env);
    expect(json.code, json.output).to.equal(3);
    const out = JSON.parse(json.output);
    expect(out.differences.map((d: any) => [d.cause, d.policy, d.signatures])).to.deep.equal([['duplicated', payg, [duplicate]]]);
  });

  it('the scheduler role\'s periodic run (two processes side by side) publishes its counts for /metrics', async () => {
    await s.h.env.redis.del(reconciliationKey(s.h.env.prefix));
    expect(await metric('duplicated')).to.equal(0);
    const runs = [startPeriodicReconciliation(api.ctx, s.io.rpc, 1500), startPeriodicReconciliation(api.ctx, s.io.rpc, 1500)];
    try {
      await waitFor(async () => (await metric('duplicated')) === 1, 20_000, 'a periodic run');
    } finally {
      await Promise.all(runs.map((r) => r.stop()));
    }
    expect(await s.h.env.redis.hkeys(reconciliationKey(s.h.env.prefix))).to.deep.equal([s.gateway]);
  });

  it('the ledgers\' own differences: usage the chain refused (unbillable), usage unsettled past its bound and a credit overdrawn (lost), a charge in flight (in doubt)', async () => {
    const db = s.h.env.db;
    const old = new Date(Date.now() - 3_600_000);
    const usage = (id: string, over: Record<string, unknown>) => ({ request_id: id, policy: payg, gateway: s.gateway, chunk: '7000', period_start: '0', metered_at: old, ...over });
    await db.insertInto('payg_usage').values([
      usage('rec-refused-1', { unbillable_reason: 'PolicyExpired' }), usage('rec-refused-2', { unbillable_reason: 'PolicyExpired' }),
      usage('rec-unsettled', {}), usage('rec-fresh', { metered_at: new Date() }), usage('rec-reserved', { reserved_until: new Date(Date.now() + 60_000) }),
    ]).execute();
    const credit = 'Cred1t1111111111111111111111111111111111111';
    await db.insertInto('prepaid_credits').values({ policy: credit, payer: credit, gateway: s.gateway, requirement_id: 'r', credit: '5000', transaction: null }).execute();
    await db.insertInto('prepaid_usage').values([1, 2].map((i) => ({ request_id: `rec-draw-${i}`, policy: credit, gateway: s.gateway, amount: '3000' }))).execute();
    const inFlight = await db.insertInto('payg_charges').values({
      policy: payg, gateway: s.gateway, amount: '7000', payment_count_before: 99, signature: 'InF1ight'.padEnd(88, '1'), blockhash: 'b', wire: 'w',
    }).returning('id').executeTakeFirstOrThrow();
    try {
      // the window opens before the usage was metered; the bound (5 min here) lies after it
      const r = await reconcileRoute({ authorization: `Bearer ${jwt}` }, `?since=${new Date(old.getTime() - 60_000).toISOString()}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const found = r.body.data.differences.map((d: any) => [d.cause, d.source, d.policy, d.serviceAmount]);
      expect(found).to.have.deep.members([
        ['duplicated', 'chain', payg, null],
        ['in_doubt', 'payg', payg, '7000'],
        ['unbillable', 'payg', payg, '14000'],
        ['lost', 'payg', payg, '7000'],
        ['lost', 'prepaid', credit, '6000'],
      ]);
      expect(r.body.data.differences.find((d: any) => d.cause === 'unbillable').detail).to.include('PolicyExpired');
      expect(r.body.data.counts).to.deep.equal({ in_doubt: 1, unbillable: 1, lost: 2, duplicated: 1 });
      await waitFor(async () => (await metric('lost')) === 2, 5000, 'the gauge at 2 lost (a scrape reads its figures at most 250 ms old)');
    } finally {
      await db.deleteFrom('payg_charges').where('id', '=', inFlight.id).execute();
      await db.deleteFrom('payg_usage').where('request_id', 'like', 'rec-%').execute();
      await db.deleteFrom('prepaid_usage').where('policy', '=', credit).execute();
      await db.deleteFrom('prepaid_credits').where('policy', '=', credit).execute();
    }
  });

  it('refuses bad input and wrong credentials with the error envelope', async () => {
    const auth = { authorization: `Bearer ${jwt}` };
    const get = (path: string, headers: Record<string, string> = auth) => fetch(`${api.url}${path}`, { headers });
    expect(await expectError(await get(`/v1/gateway/${s.gateway}/reconciliation?since=yesterday`), 400)).to.match(/since/);
    expect(await expectError(await get(`/v1/gateway/${s.gateway}/reconciliation?since=${Math.floor(Date.now() / 1000) + 3600}`), 400)).to.match(/future/);
    await expectError(await get(`/v1/gateway/${s.gateway}/reconciliation?limit=3`), 400);
    await expectError(await get('/v1/gateway/not-a-gateway/reconciliation'), 400);
    await expectError(await get(`/v1/gateway/${s.gateway}/reconciliation`, {}), 401);
    await expectError(await get(`/v1/gateway/${s.gateway}/reconciliation`, { 'x-api-key': 'tak_0000000000000000_nope' }), 401);
    const other = await gatewayJwt({ ...s.h, api }, s.h.ln.fixtures.gateways[1]?.address ?? subscription, s.authority);
    await expectError(await get(`/v1/gateway/${s.gateway}/reconciliation`, { authorization: `Bearer ${other}` }), 403);
  });
});
