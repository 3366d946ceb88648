/**
 * x402 `exact` through an API node: an exact payment settled by the node's facilitator is
 * the service's event `x402.payment.settled`, delivered to the gateway's webhook (a real
 * receiver registered through the API, signed by the webhook worker) and to the Socket.IO
 * room of its memo (a real socket.io-client); the merchant's revenue and its
 * `exact-payments` CSV export count it. The fee payer is rotated by the admin route; the
 * old one still co-signs a payment built for it; the balances show in the admin list and /metrics.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field */
import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { exactFacilitatorOf, exactRealtimeAttachment } from '../../src/app/x402-exact.js';
import type { ExactFacilitator } from '../../commands/x402/exact/facilitator.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet } from '../support/devnet.js';

const ADMIN = 'admin-key-exact-events';

describe('x402 exact: the settled payment is an event, a webhook, a room message and revenue', function () {
  this.timeout(90_000);
  let env: TestEnv;
  let dn: DevnetLocalnet;
  let api: TestApi;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let client: TestClient;
  let facilitator: ExactFacilitator;
  let merchant: DevnetWallet;
  const lifecycle: any[] = [];

  const admin = (path: string, init: RequestInit = {}) => fetch(`${api.url}${path}`, { ...init, headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const requirements = (feePayer: string, memo: string): PaymentRequirements => ({
    scheme: 'exact', network: DEVNET_NETWORK, amount: '2500000', asset: DEVNET_USDC, payTo: merchant.address, maxTimeoutSeconds: 60, extra: { feePayer, memo },
  });
  const pay = async (payer: DevnetWallet, r: PaymentRequirements) => {
    const { payload } = await new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }).createPaymentPayload(2, r);
    return { x402Version: 2, resource: { url: 'https://merchant.example/feed', description: 'feed', mimeType: 'application/json' }, accepted: r, payload };
  };
  const feePayerNow = async () => {
    const k = await facilitator.supportedKind(DEVNET_NETWORK);
    return String(k?.kind.extra?.['feePayer']);
  };

  before(async () => {
    env = await createTestEnv('x402-exact-events');
    dn = await startDevnetLocalnet('exact-events');
    api = await startTestApi(env, {
      SOLANA_RPC_URL: dn.rpcUrl, SOLANA_CLUSTER: 'devnet', ADMIN_API_KEY: ADMIN, SIGNING_KEY_ENCRYPTION_KEY: 'cd'.repeat(32), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      X402_CONFIRM_TIMEOUT_MS: '10000',
    }, { attachments: [exactRealtimeAttachment()] });
    facilitator = exactFacilitatorOf(api.node);
    merchant = dn.fund('merchant');
    fundWallet(dn.ln.chain, new PublicKey(await feePayerNow()), 0n);
    receiver = await startReceiver();
    const hook = await admin('/v1/webhooks', { method: 'POST', body: JSON.stringify({ gateway_pubkey: merchant.address, endpoint_url: receiver.url }) });
    expect(hook.status, await hook.clone().text()).to.equal(201);
    const config = api.ctx.config;
    worker = startWebhookWorker({ config: { ...config, webhooks: { ...config.webhooks, pollMs: 50 } }, db: env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
    client = await connectClient(api.url);
    client.socket.on('lifecycle', (m: unknown) => lifecycle.push(m));
  });
  after(async () => { client?.close(); await worker?.stop(); await receiver?.close(); await api?.close(); await dn?.close(); await env?.close(); });

  it('a settled payment reaches the webhook and the memo\'s room, and counts in revenue and the export', async () => {
    expect((await client.subscribe('order-42')).ok).to.equal(true);
    const payer = dn.fund('payer');
    const r = requirements(await feePayerNow(), 'order-42');
    const s = await facilitator.settle(await pay(payer, r), r, { gateway: merchant.address });
    expect(s, JSON.stringify(s)).to.deep.include({ success: true, payer: payer.address });

    // webhooks are delivered at least once (a slow answer under load is retried): one per event id
    const delivered = () => [...new Map(receiver.requests.map((q) => JSON.parse(q.body)).filter((b: any) => b.type === 'x402.payment.settled').map((b: any) => [b.id, b])).values()];
    const roomTransactions = () => new Set(lifecycle.map((m) => m.data?.transaction));
    await waitFor(async () => delivered().length > 0 && lifecycle.length > 0, 30_000, 'the webhook and the room message')
      .catch(() => { throw new Error(`webhooks ${delivered().length} (of ${receiver.requests.length} requests), room messages ${lifecycle.length}`); });
    const body = delivered()[0];
    expect(body.data).to.deep.include({
      event: 'x402.payment.settled', gateway: merchant.address, payer: payer.address, amount: '2500000', asset: DEVNET_USDC, payTo: merchant.address,
      resource: 'https://merchant.example/feed', memo: 'order-42', transaction: s.transaction, network: DEVNET_NETWORK,
    });
    expect(receiver.requests.find((q) => q.body.includes('x402.payment.settled'))!.headers['webhook-signature']).to.match(/^v1,/);
    expect(lifecycle[0]).to.deep.include({ type: 'x402.payment.settled' });
    expect(lifecycle[0].data).to.deep.include({ memo: 'order-42', transaction: s.transaction, amount: '2500000' });

    // a second payment with the same memo (a new transaction): two payments in revenue. A new block first: built on
    // the same blockhash with the same memo, the same payer's transfer would be the same bytes, the same payment
    await fetch(dn.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tributary_advanceSlots', params: [1] }) });
    const s2 = await facilitator.settle(await pay(payer, r), r, { gateway: merchant.address });
    expect(s2.success, JSON.stringify(s2)).to.equal(true);
    expect(s2.transaction, 'a new transaction').to.not.equal(s.transaction);
    await waitFor(async () => delivered().length === 2 && roomTransactions().size === 2, 30_000, 'the second webhook and room message')
      .catch(() => { throw new Error(`webhooks ${delivered().length} (of ${receiver.requests.length} requests), room messages ${lifecycle.length} (${roomTransactions().size} payments)`); });
    expect(delivered().map((b: any) => b.data.transaction)).to.have.members([s.transaction, s2.transaction]);
    expect([...roomTransactions()]).to.have.members([s.transaction, s2.transaction]);
    const day = Math.floor(Date.now() / 86_400_000) * 86_400;
    const rev = await admin(`/v1/gateway/${merchant.address}/merchant/revenue?bucket=day&from=${day}&to=${day + 86_399}`);
    expect(rev.status).to.equal(200);
    const series = ((await rev.json()) as any).data.series as any[];
    const usdc = series.find((x) => x.tokenMint === DEVNET_USDC);
    expect(usdc.buckets[0]).to.deep.include({ gross: '5000000', net: '5000000', payments: 2, gatewayFee: '0', protocolFee: '0', mrr: '0' });

    const csv = await (await admin(`/v1/gateway/${merchant.address}/merchant/export/exact-payments?format=csv`)).text();
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).to.equal('time,signature,payer,payTo,tokenMint,amount,resource,memo,network');
    expect(lines).to.have.length(3);
    expect(lines[1]).to.include(s.transaction).and.include(',2500000,https://merchant.example/feed,order-42,');
  });

  it('the admin rotates the fee payer; the old one co-signs what was built for it; balances are listed', async () => {
    const old = await feePayerNow();
    const payer = dn.fund('payer-rot');
    const builtForOld = requirements(old, 'rot-1');
    const payment = await pay(payer, builtForOld);

    const rot = await admin('/v1/admin/x402/fee-payer/rotate', { method: 'POST' });
    expect(rot.status).to.equal(200);
    const rotated = (await rot.json()) as any;
    expect(rotated).to.deep.include({ network: DEVNET_NETWORK, oldFeePayer: old });
    expect(rotated.newFeePayer).to.not.equal(old);
    // every node reads the keys again within seconds
    await waitFor(async () => (await feePayerNow()) === rotated.newFeePayer, 10_000, 'the new fee payer listed');
    expect((await facilitator.supportedKind(DEVNET_NETWORK))?.signers).to.deep.equal([rotated.newFeePayer, old]);

    const s = await facilitator.settle(payment, builtForOld, { gateway: merchant.address });
    expect(s, JSON.stringify(s)).to.deep.include({ success: true });

    const list = (await (await admin('/v1/admin/x402/fee-payers')).json()) as any;
    const byAddress = new Map(list.feePayers.map((p: any) => [p.address, p]));
    expect(byAddress.get(rotated.newFeePayer)).to.deep.include({ active: true, lamports: 0, low: true });
    expect((byAddress.get(old) as any).active).to.equal(false);
    expect((byAddress.get(old) as any).lamports).to.be.greaterThan(0);
    expect((await fetch(`${api.url}/v1/admin/x402/fee-payer/rotate`, { method: 'POST' })).status).to.equal(401);

    // /metrics: each fee payer's SOL, and the active one flagged low (it holds none yet)
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).to.match(new RegExp(`tributary_x402_fee_payer_lamports\\{network="${DEVNET_NETWORK}",fee_payer="${old}",active="false"\\} [1-9]`));
    expect(metrics).to.include(`tributary_x402_fee_payer_low{network="${DEVNET_NETWORK}",fee_payer="${rotated.newFeePayer}"} 1`);
  });
});
