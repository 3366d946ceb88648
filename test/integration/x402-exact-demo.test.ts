/**
 * /v1/x402/demo-standard sells x402 `exact` first: an unmodified @x402/fetch
 * (wrapFetchWithPayment) with @x402/svm's exact client scheme and a funded wallet reads the
 * 402, pays and gets the demo content. The API node runs in-process with
 * SOLANA_CLUSTER=devnet on the localnet answering as devnet; the localnet's balances are
 * the oracle: the payer loses the price, the demo recipient gains it, the service's fee
 * payer loses exactly the network fee. The payment is the gateway's webhook
 * `x402.payment.settled` and a message in the Socket.IO room of the payment's memo (the
 * demo sets no memo: the client's own nonce memo names the room). A replayed
 * PAYMENT-SIGNATURE and a garbage one are 402s with the reason, and move nothing.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import { createSolanaRpc, getCompiledTransactionMessageDecoder, type Signature } from '@solana/kit';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { decodeTransactionFromPayload, MEMO_PROGRAM_ADDRESS } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { exactRealtimeAttachment } from '../../src/app/x402-exact.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet } from '../support/devnet.js';
import { paymentRequired } from '../../commands/x402/middleware.js';
import { DEMO_STANDARD_PATH, registerStandardDemo } from '../../commands/x402/standard/demo-route.js';
import { startExactWorld, type ExactWorld, type Faults } from './x402-exact-support.js';

const SEED = 'exact-demo';
const ADMIN = 'admin-key-exact-demo';
const PRICE = 10_000n;

/** The memo of an exact payment's transaction (the client writes a nonce when the requirement names none). */
function memoOf(transaction: string): string | undefined {
  const m = getCompiledTransactionMessageDecoder().decode(decodeTransactionFromPayload({ transaction }).messageBytes);
  const ix = m.instructions.find((i) => m.staticAccounts[i.programAddressIndex] === MEMO_PROGRAM_ADDRESS);
  return ix?.data ? new TextDecoder().decode(Uint8Array.from(ix.data)) : undefined;
}

describe('x402 exact on /v1/x402/demo-standard: an unmodified @x402/fetch + @x402/svm client pays per request', function () {
  this.timeout(90_000);
  let env: TestEnv;
  let dn: DevnetLocalnet;
  let api: TestApi;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let socket: TestClient;
  let url = '';
  let feePayer = '';
  let recipient = '';
  let gateway = '';
  const lifecycle: any[] = [];
  /** every PAYMENT-SIGNATURE the client sent */
  const sent: string[] = [];

  /**
   * The fetch @x402/fetch wraps: the network's, recording each PAYMENT-SIGNATURE and
   * joining its memo's room before it leaves (the room's message follows the settlement).
   */
  const observingFetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get('payment-signature');
    if (signature) {
      sent.push(signature);
      const memo = memoOf(String((decodePaymentSignatureHeader(signature).payload as { transaction: string }).transaction));
      if (memo) expect((await socket.subscribe(memo)).ok).to.equal(true);
    }
    return fetch(request);
  };

  before(async () => {
    env = await createTestEnv('x402-exact-demo');
    dn = await startDevnetLocalnet(SEED);
    // the demo sells for the localnet's first fixture gateway, paid to its authority (funded with devnet USDC)
    const gw = dn.ln.fixtures.gateways[0]!;
    gateway = gw.address;
    recipient = gw.authority;
    api = await startTestApi(env, {
      SOLANA_RPC_URL: dn.rpcUrl, SOLANA_CLUSTER: 'devnet', ADMIN_API_KEY: ADMIN, SIGNING_KEY_ENCRYPTION_KEY: 'ab'.repeat(32),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', X402_CONFIRM_TIMEOUT_MS: '10000', X402_DEMO_RECIPIENT: recipient, X402_DEMO_GATEWAY: gateway,
    }, { attachments: [exactRealtimeAttachment()] });
    url = `${api.url}/v1/x402/demo-standard`;
    receiver = await startReceiver();
    const hook = await fetch(`${api.url}/v1/webhooks`, {
      method: 'POST', headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ gateway_pubkey: gw.authority, endpoint_url: receiver.url }),
    });
    expect(hook.status, await hook.clone().text()).to.equal(201);
    const config = api.ctx.config;
    worker = startWebhookWorker({ config: { ...config, webhooks: { ...config.webhooks, pollMs: 50 } }, db: env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
    socket = await connectClient(api.url);
    socket.socket.on('lifecycle', (m: unknown) => lifecycle.push(m));
  });
  after(async () => { socket?.close(); await worker?.stop(); await receiver?.close(); await api?.close(); await dn?.close(); await env?.close(); });

  it('the 402 offers exact first: the demo price in devnet USDC to the demo recipient, the service\'s fee payer in extra', async () => {
    const res = await fetch(url);
    expect(res.status).to.equal(402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    const exact = required.accepts[0]!;
    expect(exact).to.deep.include({ scheme: 'exact', network: DEVNET_NETWORK, amount: String(PRICE), asset: DEVNET_USDC, payTo: recipient, maxTimeoutSeconds: 60 });
    feePayer = String(exact.extra['feePayer']);
    expect(feePayer).to.match(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(required.accepts.slice(1).map((a) => a.scheme)).to.deep.equal(['deferred', 'x402://payg']);
    // SOL for the network fees only
    fundWallet(dn.ln.chain, new PublicKey(feePayer), 0n);
  });

  it('the client pays and gets the content; the balances move once; the webhook and the memo\'s room hear of it', async () => {
    const payer = dn.fund('payer');
    const client = new x402Client().register(DEVNET_NETWORK, new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }));
    const paidFetch = wrapFetchWithPayment(observingFetch, client);
    const start = { payer: dn.tokenBalance(payer.address, DEVNET_USDC), to: dn.tokenBalance(recipient, DEVNET_USDC), fee: dn.lamports(feePayer), sol: dn.lamports(payer.address) };

    const res = await paidFetch(url);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.content).to.be.a('string').and.include('demo content');
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).to.deep.include({ success: true, network: DEVNET_NETWORK, payer: payer.address });
    expect(settled.transaction).to.match(/^[1-9A-HJ-NP-Za-km-z]{87,88}$/);

    expect(dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(start.payer - PRICE);
    expect(dn.tokenBalance(recipient, DEVNET_USDC)).to.equal(start.to + PRICE);
    expect(dn.lamports(payer.address), 'the payer pays no SOL').to.equal(start.sol);
    const tx = await createSolanaRpc(dn.rpcUrl).getTransaction(settled.transaction as Signature, { maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    expect(tx?.meta?.err).to.equal(null);
    expect(dn.lamports(feePayer), 'the fee payer pays the network fee, nothing more').to.equal(start.fee - Number(tx?.meta?.fee));

    const memo = memoOf(String((decodePaymentSignatureHeader(sent[0]!).payload as { transaction: string }).transaction));
    expect(memo, 'the client\'s nonce memo').to.be.a('string');
    const delivered = () => receiver.requests.map((q) => JSON.parse(q.body)).filter((b: any) => b.type === 'x402.payment.settled');
    await waitFor(async () => delivered().length > 0 && lifecycle.length > 0, 30_000, 'the webhook and the room message')
      .catch(() => { throw new Error(`webhooks ${delivered().length} (of ${receiver.requests.length} requests), room messages ${lifecycle.length}`); });
    expect(delivered()[0].data).to.deep.include({
      event: 'x402.payment.settled', gateway, payer: payer.address, amount: String(PRICE), asset: DEVNET_USDC, payTo: recipient,
      resource: url, memo, transaction: settled.transaction, network: DEVNET_NETWORK,
    });
    expect(lifecycle[0]).to.deep.include({ type: 'x402.payment.settled' });
    expect(lifecycle[0].data).to.deep.include({ memo, transaction: settled.transaction });
  });

  it('a replayed PAYMENT-SIGNATURE is a 402 with the reason, and nothing moves', async () => {
    const replay = sent[0]!;
    const payer = dn.fund('payer');
    const start = { payer: dn.tokenBalance(payer.address, DEVNET_USDC), to: dn.tokenBalance(recipient, DEVNET_USDC), fee: dn.lamports(feePayer) };
    const res = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': replay } });
    expect(res.status).to.equal(402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.error).to.include('duplicate_settlement');
    expect(((await res.json()) as any).error).to.equal(required.error);
    expect(dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(start.payer);
    expect(dn.tokenBalance(recipient, DEVNET_USDC)).to.equal(start.to);
    expect(dn.lamports(feePayer)).to.equal(start.fee);
  });

  it('a replay is refused after Redis lost every key too: the settlement row remembers the one request served', async () => {
    const keys = await env.redis.keys(`${env.prefix}*`);
    if (keys.length > 0) await env.redis.del(...keys);
    const res = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': sent[0]! } });
    expect(res.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.include('duplicate_settlement');
    const rows = await env.db.selectFrom('x402_exact_settlements').select(['served_at']).where('state', '=', 'settled').execute();
    expect(rows.length).to.be.greaterThan(0);
    for (const r of rows) expect(r.served_at, 'served once').to.be.instanceOf(Date);
  });

  it('a payment for less than the price, and a garbage header, are 402s with the reason', async () => {
    const payer = dn.fund('payer-cheap');
    const offered = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!).accepts[0]!;
    const cheap = { ...offered, amount: '1' };
    const { payload } = await new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }).createPaymentPayload(2, cheap);
    const header = Buffer.from(JSON.stringify({ x402Version: 2, resource: { url }, accepted: cheap, payload })).toString('base64');
    const start = dn.tokenBalance(payer.address, DEVNET_USDC);
    const res = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(res.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.include('accepted.amount');
    // the client's accepted says the price, its transaction pays 1: the facilitator's check
    const lying = Buffer.from(JSON.stringify({ x402Version: 2, resource: { url }, accepted: offered, payload })).toString('base64');
    const res2 = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': lying } });
    expect(res2.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res2.headers.get('payment-required')!).error).to.include('amount_mismatch');
    expect(dn.tokenBalance(payer.address, DEVNET_USDC)).to.equal(start);

    // a scheme the route does not offer
    const other = Buffer.from(JSON.stringify({ x402Version: 2, resource: { url }, accepted: { ...offered, scheme: 'streaming' }, payload })).toString('base64');
    const res3 = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': other } });
    expect(res3.status).to.equal(402);
    const otherReason = decodePaymentRequiredHeader(res3.headers.get('payment-required')!).error;
    expect(otherReason).to.equal('accepted.scheme "streaming" is not offered by this resource; it offers exact, deferred, x402://payg');

    const garbage = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': 'not base64 at all!' } });
    expect(garbage.status).to.equal(402);
    const g = (await garbage.json()) as any;
    expect(g).to.deep.include({ code: 'payment_required', success: false });
    expect(g.error).to.include('PAYMENT-SIGNATURE');
  });
});

describe('x402 exact on the standard demo route: a settlement not yet confirmed', function () {
  this.timeout(90_000);
  let env: TestEnv;
  let w: ExactWorld;
  let api: TestApi;
  let url = '';
  const faults: Faults = {};
  const AMOUNT = 500_000n;

  before(async () => {
    env = await createTestEnv('x402-exact-demo-pending');
    // the exact facilitator on a chain whose answers a test can lose (x402-exact-support.ts)
    w = await startExactWorld(env, { seed: 'exact-demo-pending', faults, confirmTimeoutMs: 1500 });
    const gw = w.dn.ln.fixtures.gateways[0]!;
    api = await startTestApi(env, { SOLANA_RPC_URL: w.dn.rpcUrl, SOLANA_CLUSTER: 'devnet', SIGNING_KEY_ENCRYPTION_KEY: '07'.repeat(32) }, {
      modules: [(routes, node) => registerStandardDemo(routes, node.clock, 'get', paymentRequired(
        [{ scheme: 'deferred', network: DEVNET_NETWORK, amount: 1_000_000, recipient: gw.authority, gateway: gw.address, tokenMint: DEVNET_USDC, paymentFrequency: 'Monthly' }],
        node.x402,
        { wire: 'standard', exact: { facilitator: w.facilitator, terms: { network: DEVNET_NETWORK, amount: AMOUNT, asset: DEVNET_USDC, payTo: w.merchant.address, gateway: gw.address } } },
      ))],
    });
    url = `${api.url}${DEMO_STANDARD_PATH}`;
  });
  after(async () => { await api?.close(); await w?.close(); await env?.close(); });

  it('pending: 503 with Retry-After; the same payment sent again once it is confirmed is served, once', async () => {
    const payer = w.dn.fund('payer-pending');
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const signature = request.headers.get('payment-signature');
      if (signature) sent.push(signature);
      return fetch(request);
    };
    const client = new x402Client().register(DEVNET_NETWORK, new ExactSvmClient(await payer.signer(), { rpcUrl: w.dn.rpcUrl }));
    const before = w.dn.tokenBalance(payer.address, DEVNET_USDC);
    Object.assign(faults, { loseSendAnswers: true, noStatuses: true });
    let res: Response;
    try {
      res = await wrapFetchWithPayment(recording, client)(url);
    } finally { Object.assign(faults, { loseSendAnswers: false }); }
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(503);
    expect(res.headers.get('retry-after')).to.equal('5');
    expect(body).to.deep.include({ success: false });
    expect(body.code).to.equal('upstream_unavailable');
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC), 'it landed').to.equal(before - AMOUNT);

    // still no status: still 503, nothing sent again
    const sends = w.sends.length;
    expect((await fetch(url, { headers: { 'PAYMENT-SIGNATURE': sent[0]! } })).status).to.equal(503);
    faults.noStatuses = false;
    const served = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': sent[0]! } });
    const content = (await served.json()) as any;
    expect(served.status, JSON.stringify(content)).to.equal(200);
    expect(content.content).to.include('demo content');
    expect(decodePaymentResponseHeader(served.headers.get('payment-response')!)).to.deep.include({ success: true, payer: payer.address });
    expect(w.sends.length, 'confirmed, not sent again').to.equal(sends);

    const replay = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': sent[0]! } });
    expect(replay.status).to.equal(402);
    expect(decodePaymentRequiredHeader(replay.headers.get('payment-required')!).error).to.include('duplicate_settlement');
    expect(w.dn.tokenBalance(payer.address, DEVNET_USDC), 'charged once').to.equal(before - AMOUNT);
  });
});
