/**
 * The hosted checkout page in Debian's Chromium (playwright-core), against an API node on a
 * localnet started here, paid with the Wallet Standard test wallet whose key stays in this
 * process (test/support/browser/test-wallet.ts):
 * - a payer opens a session's page, subscribes, and lands on the merchant's successUrl; the
 *   merchant then reads `complete`, the webhook arrives, the chain holds the policy paid;
 * - an already-paid and an expired session refuse in the page, a declined wallet prompt is
 *   said in words, a browser without a wallet gets a hint;
 * - screenshots at 390x844 and 1280x800 go to test/e2e/screenshots/ (committed).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import bs58 from 'bs58';
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startX402, type X402Harness } from '../integration/x402-harness.js';
import { signIn } from '../integration/auth-fixtures.js';
import { accountOf } from '../integration/scheduler-chain.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { ROOT, waitFor } from '../support/process.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { installTestWallet, type TestWallet } from '../support/browser/test-wallet.js';
import { createWebhook } from '../../commands/webhooks/service.js';
import { webhookDeps } from '../../commands/webhooks/routes.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { createLogger } from '../../infra/log/logger.js';
import { systemClock } from '../../src/kernel/domain/clock.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SHOTS = path.join(ROOT, 'test', 'e2e', 'screenshots');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** The answer's data, whether or not it comes in the success envelope. */
const dataOf = (body: Record<string, unknown>): Record<string, unknown> => (body['data'] && typeof body['data'] === 'object' ? body['data'] as Record<string, unknown> : body);

interface Merchant { url: string; server: Server }

/** The merchant's own site: the success and cancel pages the checkout sends the payer to. */
async function startMerchantSite(): Promise<Merchant> {
  const server = createServer((req, res) => {
    const page = (req.url ?? '').startsWith('/success') ? 'Thank you: your subscription is active.' : 'Checkout canceled.';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Merchant</title><h1 id="merchant">${page}</h1>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('hosted checkout page in a real browser, paid with a Wallet Standard wallet', function () {
  this.timeout(240_000);
  let h: X402Harness;
  let api: TestApi;
  let merchant: Merchant;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let browser: Browser;
  let token: string;
  const contexts: BrowserContext[] = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    h = await startX402('checkout_page', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    api = await startTestApi(h.env, { ...h.overrides, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    merchant = await startMerchantSite();
    const fixture = h.ln.fixtures.gateways[0]!;
    receiver = await startReceiver();
    await createWebhook(webhookDeps(api.node), { kind: 'admin' }, { gateway_pubkey: fixture.authority, endpoint_url: receiver.url, active: true });
    const config = api.ctx.config;
    worker = startWebhookWorker({ config: { ...config, webhooks: { ...config.webhooks, pollMs: 50 } }, db: h.env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
    const authority = Keypair.fromSecretKey(bs58.decode(fixture.authoritySecretKey));
    ({ token } = await signIn(api.url, fixture.address, { address: authority.publicKey.toBase58(), secretKey: authority.secretKey.slice(0, 32) }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    await new Promise((r) => merchant?.server.close(r));
    await api?.close();
    await h?.close();
  });

  const merchantCall = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${api.url}${p}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  async function createSession(trackingId: string): Promise<{ id: string; url: string }> {
    const accepts = await h.accepts();
    const requirement = accepts.find((a) => a.scheme === 'deferred')!;
    const r = await merchantCall('POST', '/v1/checkout/sessions', {
      requirement, trackingId, label: 'Tributary Pro, monthly', successUrl: `${merchant.url}/success`, cancelUrl: `${merchant.url}/cancel`,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return r.body as { id: string; url: string };
  }

  /** A page in a fresh context (its own viewport), with the test wallet of `payer` unless null. */
  async function open(payer: Keypair | null, viewport = DESKTOP): Promise<{ page: Page; wallet: TestWallet | undefined; failed: string[] }> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const wallet = payer ? await installTestWallet(context, payer) : undefined;
    const page = await context.newPage();
    const failed: string[] = [];
    page.on('pageerror', (err) => failed.push(err.message));
    page.on('request', (r) => { if (!r.url().startsWith(api.url) && !r.url().startsWith(merchant.url) && !r.url().startsWith('data:')) failed.push(`off-origin ${r.url()}`); });
    return { page, wallet, failed };
  }

  const statusText = async (page: Page) => (await page.locator('#status').textContent()) ?? '';

  it('subscribes, lands on successUrl; the session is complete, the webhook arrived, the chain holds the policy paid', async () => {
    const session = await createSession('page-pays');
    expect(session.url).to.match(new RegExp(`/checkout/${session.id}$`));
    const payer = h.payer();
    const { page, wallet, failed } = await open(payer);
    const res = await page.goto(`${api.url}/checkout/${session.id}`);
    expect(res?.status()).to.equal(200);
    const subscribe = page.getByRole('button', { name: 'Subscribe' });
    await page.waitForSelector('body[data-state="ready"]');
    expect(await page.locator('#title').textContent()).to.equal('Tributary Pro, monthly');
    const terms = await page.locator('#terms').innerText();
    for (const term of ['Pay to', 'Amount', 'How often', 'Fees', 'First charge']) expect(terms).to.include(term);
    await page.screenshot({ path: path.join(SHOTS, 'checkout-desktop.png'), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: path.join(SHOTS, 'checkout-mobile.png'), fullPage: true });

    await subscribe.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${merchant.url}/success?session_id=${session.id}`, { timeout: 60_000 });
    expect(await page.locator('#merchant').textContent()).to.include('Thank you');
    expect(wallet!.signed.map((s) => s.kind)).to.deep.equal(['transaction', 'message']);
    expect(Buffer.from(wallet!.signed[1]!.bytes).toString('utf8')).to.match(/^tributary-x402\|/);

    const merchantView = await merchantCall('GET', `/v1/checkout/sessions/${session.id}`);
    expect(merchantView.status).to.equal(200);
    const view = dataOf(merchantView.body);
    expect(view['status']).to.equal('complete');
    const policy = JSON.stringify(view).match(/"policy":"(\w{32,44})"/)?.[1] ?? '';
    expect(policy, JSON.stringify(view)).to.not.equal('');
    const onChain = await accountOf(h.rpc, policy);
    expect(Number(onChain['payment_count'])).to.be.at.least(1);
    expect((onChain['total_paid'] as { toString(): string }).toString()).to.match(/^[1-9]\d*$/);

    const hooks = await waitFor(async () => {
      const bodies = receiver.requests.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
      return bodies.find((b) => b.type === 'checkout.session.completed' && b.data['sessionId'] === session.id);
    }, 30_000, 'the checkout.session.completed webhook');
    expect(hooks.data).to.include({ policy, payer: payer.publicKey.toBase58(), trackingId: 'page-pays' });
    expect(failed).to.deep.equal([]);

    // the same session again: already paid, said so, the way back offered
    const again = await open(Keypair.generate(), PHONE);
    await again.page.goto(`${api.url}/checkout/${session.id}`);
    await again.page.waitForSelector('body[data-state="complete"]');
    expect(await statusText(again.page)).to.include('already paid');
    expect(await again.page.locator('#pay-area').isHidden()).to.equal(true);
    expect(await again.page.getByRole('link', { name: 'Back to the merchant' }).getAttribute('href')).to.equal(`${merchant.url}/cancel`);
  });

  it('a session that expires while its page is open refuses to pay, and reads expired on reload', async () => {
    const session = await createSession('page-expires');
    const { page, failed } = await open(h.payer());
    await page.goto(`${api.url}/checkout/${session.id}`);
    await page.waitForSelector('body[data-state="ready"]');
    await h.env.db.updateTable('checkout_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', session.id).execute();
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForSelector('body[data-state="expired"]');
    expect(await statusText(page)).to.include('expired');
    await page.reload();
    await page.waitForSelector('body[data-state="expired"]');
    expect(await statusText(page)).to.match(/expired: nothing was charged/);
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: path.join(SHOTS, 'checkout-expired-mobile.png'), fullPage: true });
    expect(failed).to.deep.equal([]);
  });

  it('a wallet without the token is told so in words, never a stack, and the session stays open', async () => {
    const session = await createSession('page-no-funds');
    const poor = Keypair.generate();
    fundWallet(h.ln.chain, poor.publicKey, 0n);
    const { page } = await open(poor);
    await page.goto(`${api.url}/checkout/${session.id}`);
    await page.waitForSelector('body[data-state="ready"]');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await waitFor(async () => (await page.locator('#status.error').count()) > 0, 30_000, 'the refusal in the status line');
    const said = await statusText(page);
    expect(said).to.match(/^The payment did not go through: .*(token|balance|enough)/i);
    expect(said).not.to.match(/\n\s+at |Error:|undefined|\[object/);
    expect(await page.getByRole('button', { name: 'Subscribe' }).isEnabled()).to.equal(true);
    const r = await merchantCall('GET', `/v1/checkout/sessions/${session.id}`);
    expect(dataOf(r.body)['status']).to.equal('open');
  });

  it('a declined wallet prompt is said in words and nothing is paid; without a wallet, a hint', async () => {
    const session = await createSession('page-declined');
    const { page, wallet } = await open(h.payer());
    wallet!.reject(true);
    await page.goto(`${api.url}/checkout/${session.id}`);
    await page.waitForSelector('body[data-state="ready"]');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await waitFor(async () => (await statusText(page)).includes('declined'), 20_000, 'the declined message');
    expect(await statusText(page)).to.equal('The wallet request was declined. Nothing was signed.');
    expect(await page.getByRole('button', { name: 'Subscribe' }).isEnabled()).to.equal(true);
    const r = await merchantCall('GET', `/v1/checkout/sessions/${session.id}`);
    expect(dataOf(r.body)['status']).to.equal('open');

    const bare = await open(null, PHONE);
    await bare.page.goto(`${api.url}/checkout/${session.id}`);
    await bare.page.waitForSelector('body[data-state="ready"]');
    expect(await bare.page.locator('#wallet-hint').textContent()).to.include('No Solana wallet found in this browser');
    expect(await bare.page.getByRole('button', { name: 'Subscribe' }).isDisabled()).to.equal(true);
  });
});
