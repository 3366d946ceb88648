/**
 * The merchant routes over HTTP on the read-model story: gateway JWT or admin key,
 * subscribers with filters and paging, revenue series whose sums equal the archive's,
 * streamed exports with their file names, and the error envelope for every bad input.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { merchantProjection } from '../../projections/merchant/projection.js';
import { archiveRevenue } from '../support/merchant-archive.js';
import { expectError, newWallet, randomSignature, signIn, type Wallet } from './auth-fixtures.js';
import { buildScenario, G1, G2, K, P, project, USDC_DEV, USDT } from './readmodels-scenario.js';
import { announce, type LifecycleEvent } from '../../commands/scheduler/lifecycle-events.js';
import { LIFECYCLE_VERSION } from '../../src/kernel/names/index.js';

const ADMIN = 'merchant-admin-key';

describe('merchant routes', () => {
  let env: TestEnv;
  let api: TestApi;
  let wallet: Wallet;
  let token: string;
  const events = buildScenario('api');
  const get = (path: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }) => fetch(`${api.url}${path}`, { headers });

  before(async () => {
    env = await createTestEnv('merchant_api');
    await project(env, [archiveProjection, paymentsProjection, merchantProjection], events);
    wallet = await newWallet();
    for (const [address, signer] of [[G1, wallet.address], [G2, K.adminG2]] as const) {
      await env.db.insertInto('gateways').values({
        address, authority: signer, signer, fee_recipient: signer, fee_bps: 100, name: 'g', url: '', active: true, deleted: false,
        created_at: 1, updated_at: 1, deleted_at: null, created_slot: 1, created_signature: randomSignature(),
      }).execute();
    }
    api = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:1', ADMIN_API_KEY: ADMIN, RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000' });
    ({ token } = await signIn(api.url, G1, wallet));
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  it('subscribers: the gateway JWT sees its payers, filtered and paged', async () => {
    const res = await get(`/v1/gateway/${G1}/merchant/subscribers`);
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { success: boolean; data: { items: { payer: string; tokenMint: string; status: string; totalPaid: string; pastDue: boolean }[]; total: number } };
    expect(body.success).to.equal(true);
    expect(body.data.total).to.equal(3); // w1/USDC, w2/USDC, w1/USDT
    expect(body.data.items.every((s) => s.pastDue === false)).to.equal(true);
    const usdt = await (await get(`/v1/gateway/${G1}/merchant/subscribers?tokenMint=${USDT}`)).json() as typeof body;
    expect(usdt.data.items).to.have.length(1);
    expect(usdt.data.items[0]).to.include({ payer: K.w1, totalPaid: '9', status: 'active' });
    const page = await (await get(`/v1/gateway/${G1}/merchant/subscribers?limit=1&offset=1`)).json() as typeof body;
    expect(page.data.items).to.have.length(1);
    expect(page.data.total).to.equal(3);
  });

  it('the admin key reads any gateway; no credential is 401, another gateway 403', async () => {
    const admin = await get(`/v1/gateway/${G2}/merchant/subscribers?status=ended`, { 'x-admin-key': ADMIN });
    expect(admin.status).to.equal(200);
    const ended = (await admin.json()) as { data: { items: { payer: string }[] } };
    expect(ended.data.items.map((s) => s.payer)).to.deep.equal([K.w3]);
    await expectError(await get(`/v1/gateway/${G1}/merchant/subscribers`, {}), 401);
    await expectError(await get(`/v1/gateway/${G1}/merchant/revenue`, { 'x-admin-key': 'wrong' }), 401);
    await expectError(await get(`/v1/gateway/${G2}/merchant/revenue`), 403);
    await expectError(await get(`/v1/gateway/${G2}/merchant/export/payments`), 403);
  });

  it('revenue: every bucket in range, sums equal to the archive, MRR carried', async () => {
    const direct = (await archiveRevenue(env.db)).filter((b) => b.gateway === G1 && b.token_mint === USDC_DEV && b.bucket === 'day');
    const first = Number(direct[0]!.bucket_start);
    const last = Number(direct[direct.length - 1]!.bucket_start);
    const res = await get(`/v1/gateway/${G1}/merchant/revenue?bucket=day&from=${first}&to=${last + 86_399}&tokenMint=${USDC_DEV}`);
    expect(res.status).to.equal(200);
    const { data } = (await res.json()) as { data: { series: { tokenMint: string; buckets: { start: number; gross: string; net: string; gatewayFee: string; protocolFee: string; payments: number; mrr: string }[] }[] } };
    expect(data.series).to.have.length(1);
    const buckets = data.series[0]!.buckets;
    expect(buckets).to.have.length((last - first) / 86_400 + 1);
    for (const d of direct) {
      const b = buckets.find((x) => x.start === Number(d.bucket_start))!;
      expect({ gross: b.gross, net: b.net, gatewayFee: b.gatewayFee, protocolFee: b.protocolFee, payments: String(b.payments) })
        .to.deep.equal({ gross: d.gross, net: d.net, gatewayFee: d.gateway_fee, protocolFee: d.protocol_fee, payments: d.payments });
    }
    expect(buckets[buckets.length - 1]!.mrr).to.equal('0'); // the monthly plan completed
    const all = await (await get(`/v1/gateway/${G1}/merchant/revenue?bucket=month&from=2023-12-01&to=2024-12-31T23:59:59Z`)).json() as { data: { series: { tokenMint: string; buckets: { mrr: string }[] }[] } };
    expect(all.data.series.map((s) => s.tokenMint).sort()).to.deep.equal([USDC_DEV, USDT].sort());
    expect(all.data.series.find((s) => s.tokenMint === USDT)!.buckets.at(-1)!.mrr).to.equal('39');
    // a range after the last event: zeros, with the MRR carried in from before it
    const later = Number(direct[direct.length - 1]!.bucket_start) + 40 * 86_400;
    const carried = await (await get(`/v1/gateway/${G1}/merchant/revenue?bucket=week&from=${later}&to=${later + 21 * 86_400}&tokenMint=${USDT}`)).json() as { data: { series: { buckets: { gross: string; mrr: string }[] }[] } };
    expect(carried.data.series[0]!.buckets.map((b) => [b.gross, b.mrr])).to.deep.equal([['0', '39'], ['0', '39'], ['0', '39'], ['0', '39']]);
  });

  it('bad input gets the error envelope and a 400', async () => {
    for (const q of ['bucket=year', 'from=yesterday', 'from=2024-02-31', 'from=2024-02-01&to=2024-01-01', 'from=2000-01-01&to=2024-01-01', 'tokenMint=xyz', 'extra=1']) {
      await expectError(await get(`/v1/gateway/${G1}/merchant/revenue?${q}`), 400);
    }
    for (const q of ['status=gone', 'limit=0', 'limit=abc', 'offset=-1']) {
      await expectError(await get(`/v1/gateway/${G1}/merchant/subscribers?${q}`), 400);
    }
    await expectError(await get(`/v1/gateway/${G1}/merchant/export/secrets`), 400);
    await expectError(await get(`/v1/gateway/${G1}/merchant/export/payments?format=xlsx`), 400);
    await expectError(await get(`/v1/gateway/${G1}/merchant/export/payments?status=active`), 400);
    await expectError(await get('/v1/gateway/not-a-key/merchant/subscribers', { 'x-admin-key': ADMIN }), 400);
  });

  it('exports stream CSV and NDJSON with a file name', async () => {
    const res = await get(`/v1/gateway/${G1}/merchant/export/payments`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/csv/);
    expect(res.headers.get('content-disposition')).to.match(new RegExp(`^attachment; filename="tributary-payments-${G1.slice(0, 8)}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`));
    const lines = (await res.text()).trimEnd().split('\r\n');
    expect(lines[0]).to.equal('time,signature,policy,payer,recipient,tokenMint,amount,recordId,trackingId');
    const g1Payments = events.filter((e) => e.name === 'PaymentRecord' && e.data['gateway'] === G1).length;
    expect(lines).to.have.length(1 + g1Payments);
    const nd = await get(`/v1/gateway/${G1}/merchant/export/subscribers?format=ndjson&status=active`);
    expect(nd.headers.get('content-disposition')).to.include('.ndjson');
    const rows = (await nd.text()).trim().split('\n').map((l) => JSON.parse(l) as { payer: string; status: string; pastDue: boolean });
    expect(rows.every((r) => r.status === 'active' && r.pastDue === false)).to.equal(true);
    const rev = await (await get(`/v1/gateway/${G1}/merchant/export/revenue?bucket=month&tokenMint=${USDT}`)).text();
    expect(rev.split('\r\n')[1]).to.match(new RegExp(`^\\d{4}-\\d{2}-01T00:00:00.000Z,month,${USDT},9,`));
    const pol = await (await get(`/v1/gateway/${G1}/merchant/export/policies?format=ndjson`)).text();
    expect(pol.trim().split('\n')).to.have.length(5);
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = await (await fetch(`${api.url}/openapi.yaml`)).text();
    for (const p of ['subscribers', 'revenue', 'export/{kind}']) expect(doc).to.include(`/v1/gateway/{gateway}/merchant/${p}:`);
  });

  it("past due follows the scheduler's lifecycle events: set by past_due, cleared by recovered or canceled", async () => {
    let n = 0;
    const recorded = () => env.redis.incr(env.keys.readVersion(LIFECYCLE_VERSION));
    const lifecycle = (name: LifecycleEvent['name']) => announce({ db: env.db, nowMs: () => Date.now(), recorded }, {
      name, key: `${name}:${P.mile1}:${(n += 1)}`, gateway: G1, policy: P.mile1, trackingId: '', dueAt: null, details: {},
    });
    const flags = async () => {
      const body = await (await get(`/v1/gateway/${G1}/merchant/subscribers`)).json() as { data: { items: { payer: string; tokenMint: string; pastDue: boolean }[] } };
      const csv = (await (await get(`/v1/gateway/${G1}/merchant/export/subscribers`)).text()).trimEnd().split('\r\n');
      const pastDueColumn = csv[0]!.split(',').indexOf('pastDue');
      return {
        api: body.data.items.map((s) => `${s.payer === K.w1 ? 'w1' : 'w2'}/${s.tokenMint === USDT ? 'usdt' : 'usdc'}:${s.pastDue}`).sort(),
        csv: csv.slice(1).map((l) => l.split(',')[pastDueColumn]).filter((v) => v === 'true').length,
      };
    };
    expect(await lifecycle('payment.failed')).to.equal(true);
    expect((await flags()).csv).to.equal(0);
    await lifecycle('subscription.past_due');
    expect(await flags()).to.deep.equal({ api: ['w1/usdc:true', 'w1/usdt:false', 'w2/usdc:false'], csv: 1 });
    await lifecycle('subscription.recovered');
    expect((await flags()).api).to.include('w1/usdc:false');
    await lifecycle('subscription.past_due');
    expect((await flags()).api).to.include('w1/usdc:true');
    await lifecycle('subscription.canceled');
    expect(await flags()).to.deep.equal({ api: ['w1/usdc:false', 'w1/usdt:false', 'w2/usdc:false'], csv: 0 });
  });
});
