/**
 * The payer's account page, /account, in Debian's Chromium (playwright-core), with the
 * Wallet Standard test wallet whose key stays in this process, against a localnet with
 * the indexer, projectors, scheduler and webhook worker running (the scheduler harness):
 * - the wallet signs in (it signs the payer sign-in nonce) and the page lists its policy;
 *   phone (390x844) and desktop (1280x800) screenshots go to test/e2e/screenshots/;
 * - pause (from the keyboard): the chain shows the policy Paused and the scheduler does not
 *   charge it at its due date; a declined wallet prompt is said and changes nothing;
 * - resume: Active on chain, charged again; cancel: the policy account is gone and the
 *   merchant's webhook says by: "payer"; revoke: the token account has no delegate;
 * - a token the service refuses is said in words and the page asks to sign in again.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { payAndFetch } from '../../src/app/index.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import { createWebhook } from '../../commands/webhooks/service.js';
import { webhookDeps } from '../../commands/webhooks/routes.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { associatedTokenAddress, decodeTokenAccountState } from '../../src/kernel/domain/spl-token.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerPayerAccountRoutes } from '../../commands/payer-account/routes.js';
import { registerMeRoutes } from '../../queries/me/routes.js';
import { registerAccountPage } from '../../infra/http/account-page.js';
import { PAGE_CSP } from '../../infra/http/web-assets.js';
import type { RunningScheduler } from '../../commands/scheduler/scheduler.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { ROOT, waitFor } from '../support/process.js';
import { installTestWallet, type TestWallet } from '../support/browser/test-wallet.js';
import { DEMO_PATH } from '../integration/x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from '../integration/scheduler-harness.js';
import { accountOf } from '../integration/scheduler-chain.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SHOTS = path.join(ROOT, 'test', 'e2e', 'screenshots');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

describe('payer account page in a real browser, with a Wallet Standard wallet', function () {
  this.timeout(300_000);
  let s: SchedulerHarness;
  let me: TestApi;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let scheduler: RunningScheduler | undefined;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  // the subscription the tests act on, in order
  let payer: Keypair;
  let policy: string;
  let mint: string;
  let page: Page;
  let wallet: TestWallet;
  let failed: string[];

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    s = await startSchedulerHarness('account-page', { X402_DEMO_FREQUENCY: 'Custom:6' });
    me = await startTestApi(s.h.env, s.h.overrides, { modules: [registerSigningRoutes, registerPayerAccountRoutes, registerMeRoutes, registerAccountPage] });
    receiver = await startReceiver();
    await createWebhook(webhookDeps(s.h.api.node), { kind: 'admin' }, { gateway_pubkey: s.authority, endpoint_url: receiver.url, active: true });
    worker = startWebhookWorker({ config: { ...s.config, webhooks: { ...s.config.webhooks, pollMs: 50 } }, db: s.h.env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await scheduler?.stop();
    await worker?.stop();
    await receiver?.close();
    await me?.close();
    await s?.close();
  });

  /** A page in a fresh context, with the test wallet of `key` unless null; page errors and off-origin requests collected. */
  async function open(key: Keypair | null, viewport = DESKTOP): Promise<{ page: Page; wallet: TestWallet | undefined; failed: string[] }> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const w = key ? await installTestWallet(context, key) : undefined;
    const p = await context.newPage();
    const errors: string[] = [];
    p.on('pageerror', (err) => errors.push(err.message));
    p.on('request', (r) => { if (!r.url().startsWith(me.url) && !r.url().startsWith('data:')) errors.push(`off-origin ${r.url()}`); });
    return { page: p, wallet: w, failed: errors };
  }

  const statusText = async (p: Page = page) => (await p.locator('#status').textContent()) ?? '';
  const card = () => page.locator(`li.sub[data-policy="${policy}"]`);
  const chainStatus = async () => (await accountOf(s.h.rpc, policy))['status'];
  const delivered = (type: string) => receiver.requests.map((r) => JSON.parse(r.body)).find((b: any) => b.type === type && b.data?.policy === policy);
  const intents = () => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).execute();

  /** Empties the status line, so that done() reads what the next action says, and records every text it shows from now on. */
  const resetStatus = () => page.evaluate(`(() => {
    const node = document.getElementById('status');
    node.textContent = '';
    const said = node.said = [];
    new MutationObserver(() => { if (node.textContent) said.push(node.textContent); }).observe(node, { childList: true, characterData: true, subtree: true });
  })()`);
  const saidSoFar = () => page.locator('#status').evaluate((node) => (node as unknown as { said?: string[] }).said ?? []);

  /** Waits for the status line to say the action is done; on a timeout, says what it said instead. */
  async function done(words: RegExp): Promise<string> {
    try {
      await waitFor(async () => /^Done: /.test(await statusText()), 60_000, 'the page to say done');
    } catch (err) {
      throw new Error(`not done (status: ${await statusText()}; errors: ${failed.join(' | ')}): ${(err as Error).message}`);
    }
    const said = await statusText();
    expect(said).to.match(words);
    return said;
  }

  it('signs in with the wallet and lists its subscription; phone and desktop screenshots', async () => {
    scheduler = s.scheduler();
    payer = s.h.payer();
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(paid.response.status).to.equal(200);
    policy = paid.paid!.policy!;
    mint = paid.paid!.requirement.tokenMint;
    await waitFor(async () => s.records(policy).length >= 2, 30_000, 'the first scheduled payment');

    const opened = await open(payer);
    ({ page, failed } = opened);
    wallet = opened.wallet!;
    const res = await page.goto(`${me.url}/account`);
    expect(res?.status()).to.equal(200);
    expect(res?.headers()['content-security-policy']).to.equal(PAGE_CSP);
    const html = await res!.text();
    expect([...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]!.trim()), 'no inline script').to.deep.equal(['']);
    expect(html, 'no inline handler or style').not.to.match(/\son[a-z]+\s*=|<style|\sstyle=/i);
    const script = await (await fetch(`${me.url}/account/app.js`)).arrayBuffer();
    expect(gzipSync(Buffer.from(script)).length, 'script gzipped').to.be.below(150 * 1024);
    await page.waitForSelector('body[data-state="signed-out"]');
    const signIn = page.getByRole('button', { name: 'Sign in with wallet' });
    await signIn.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('body[data-state="signed-in"]', { timeout: 30_000 }).catch(async (err: Error) => {
      throw new Error(`not signed in (status: ${await statusText()}; errors: ${failed.join(' | ')}): ${err.message}`);
    });

    const address = payer.publicKey.toBase58();
    expect(wallet.signed.map((x) => x.kind)).to.deep.equal(['message']);
    const nonce = Buffer.from(wallet.signed[0]!.bytes).toString('utf8');
    expect(nonce).to.match(new RegExp(`^tributary-payer-sign-in\\|[^|]+\\|${address}\\|[^|]+$`));
    const kept = JSON.parse(await page.evaluate<string>('sessionStorage.getItem("tributary.account") ?? "null"'));
    expect(kept).to.include({ wallet: address });
    expect(kept.token).to.be.a('string');
    expect(await page.locator('#who-wallet').textContent()).to.equal(address);

    // the card: the read model has its payments within seconds of the chain
    await waitFor(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await card().locator('.payments li').count()) >= 2;
    }, 30_000, 'the subscription listed with its payments');
    const text = await card().innerText();
    const sub = (await (await fetch(`${me.url}/v1/me/subscriptions`, { headers: { authorization: `Bearer ${kept.token}` } })).json() as any).data[0];
    expect(sub.address).to.equal(policy);
    for (const want of ['Active', 'deferred', sub.amountDisplay, 'every 6 seconds', 'Next due', 'Paid through', 'Last payments']) expect(text).to.include(want);
    expect(await card().getAttribute('data-status')).to.equal('Active');
    expect(await card().locator('button[data-action]').evaluateAll((bs) => bs.map((b) => b.textContent))).to.deep.equal(['Pause', 'Cancel subscription']);
    expect(await page.locator(`li.delegation[data-mint="${mint}"] button`).textContent()).to.equal('Revoke delegation');
    const listed = await page.locator('#payments-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-signature')));
    expect(listed, 'the payments table').to.include.members(s.records(policy).slice(0, 2).map((x) => x.signature));

    await page.screenshot({ path: path.join(SHOTS, 'account-desktop.png'), fullPage: true });
    await page.setViewportSize(PHONE);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), 'no sideways scroll on a phone').to.be.at.most(PHONE.width);
    await page.screenshot({ path: path.join(SHOTS, 'account-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), 'none at 360 px either').to.be.at.most(360);
    await page.setViewportSize(DESKTOP);
    expect(failed).to.deep.equal([]);
  });

  it('a declined wallet prompt changes nothing; pause (keyboard) confirms on chain and the scheduler skips the due date', async () => {
    wallet.reject(true);
    await card().getByRole('button', { name: 'Pause' }).click();
    await waitFor(async () => (await statusText()).includes('declined'), 20_000, 'the declined message');
    expect(await statusText()).to.equal('The wallet request was declined. Nothing was signed.');
    expect(await chainStatus()).to.equal('Active');
    wallet.reject(false);

    await resetStatus();
    await card().getByRole('button', { name: 'Pause' }).focus();
    await page.keyboard.press('Enter');
    await done(/^Done: the subscription to .+ is paused/);
    const steps = await saidSoFar();
    expect(steps.slice(0, 3)).to.deep.equal(['Preparing the transaction…', `Approve in Tributary Test Wallet: pause: set the payment policy ${policy} Paused.`, 'Confirming…']);
    expect(steps.findIndex((x) => x.startsWith('Done: ')), 'done only after the confirmation').to.equal(steps.length - 1);
    expect(await chainStatus(), 'the chain shows it paused').to.equal('Paused');
    expect(await card().getAttribute('data-status')).to.equal('Paused');
    expect(await card().locator('button[data-action]').evaluateAll((bs) => bs.map((b) => b.textContent))).to.deep.equal(['Resume', 'Cancel subscription']);
    expect(await card().innerText()).to.include('not while paused');
    expect(wallet.signed.filter((x) => x.kind === 'transaction')).to.have.length(1);

    const due = Number(((await accountOf(s.h.rpc, policy))['policy_type'] as any).next_payment_due);
    const charged = s.records(policy).length;
    await new Promise((r) => setTimeout(r, Math.max(0, (due + 3) * 1000 - Date.now())));
    await waitFor(async () => !(await intents()).some((i) => ['pending', 'sending'].includes(i.status)), 20_000, 'the due date met while paused');
    expect(s.records(policy), 'not charged while paused').to.have.length(charged);
  });

  it('resume confirms on chain and the scheduler charges it again', async () => {
    const charged = s.records(policy).length;
    await resetStatus();
    await card().getByRole('button', { name: 'Resume' }).click();
    await done(/^Done: the subscription to .+ is resumed/);
    expect(await chainStatus()).to.equal('Active');
    expect(await card().getAttribute('data-status')).to.equal('Active');
    await waitFor(async () => s.records(policy).length > charged, 30_000, 'charged again after the resume');
  });

  it('cancel asks first, then deletes the policy on chain; the merchant hears by: "payer"', async () => {
    await card().getByRole('button', { name: 'Cancel subscription' }).click();
    const keep = card().getByRole('button', { name: 'Keep it' });
    expect(await keep.evaluate((b) => b === b.ownerDocument.activeElement), 'the safe answer has the focus').to.equal(true);
    await keep.click();
    expect(wallet.signed.filter((x) => x.kind === 'transaction')).to.have.length(2);
    await resetStatus();
    await card().getByRole('button', { name: 'Cancel subscription' }).click();
    await card().getByRole('button', { name: 'Yes, cancel it' }).click();
    await done(/^Done: the subscription to .+ is canceled/);
    const gone = await readProgramAccount(s.h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' });
    expect(gone.kind, 'the policy account is closed').to.not.equal('found');
    expect(await card().count()).to.equal(0);
    expect(await page.locator('#subs-empty').isVisible()).to.equal(true);

    await waitFor(async () => ['subscription.paused', 'subscription.resumed', 'subscription.canceled'].every((t) => delivered(t)), 40_000, 'the three webhooks');
    expect(delivered('subscription.paused').data).to.deep.include({ by: 'payer', from: 'Active' });
    expect(delivered('subscription.resumed').data).to.deep.include({ by: 'payer', from: 'Paused' });
    expect(delivered('subscription.canceled').data).to.deep.include({ by: 'payer', reason: 'deleted', gateway: s.gateway });
  });

  it('revoke removes the token account\'s delegate', async () => {
    const ata = associatedTokenAddress(payer.publicKey.toBase58(), mint);
    const delegate = async () => {
      const r = await s.h.rpc.call<{ value: { data: [string, string] } | null }>('getAccountInfo', [ata, { encoding: 'base64', commitment: 'confirmed' }]);
      return decodeTokenAccountState(Buffer.from(r.value!.data[0], 'base64'))!.delegate;
    };
    expect(await delegate(), 'the subscription delegated the account').to.be.a('string');

    // a wallet on another account than the signed-in one is refused before it signs
    const kept = await page.evaluate<string>('sessionStorage.getItem("tributary.account")');
    const other = await open(Keypair.generate());
    await other.page.addInitScript({ content: `sessionStorage.setItem("tributary.account", ${JSON.stringify(kept)})` });
    await other.page.goto(`${me.url}/account`);
    await other.page.waitForSelector('body[data-state="signed-in"]');
    const otherRow = other.page.locator(`li.delegation[data-mint="${mint}"]`);
    await otherRow.getByRole('button', { name: 'Revoke delegation' }).click();
    await otherRow.getByRole('button', { name: 'Yes, revoke' }).click();
    await waitFor(async () => (await statusText(other.page)).includes('but you signed in as'), 20_000, 'the wrong account said');
    expect(await statusText(other.page)).to.match(/^Tributary Test Wallet is on account \w+, but you signed in as \w+\. Switch accounts/);
    expect(other.wallet!.signed, 'nothing signed').to.deep.equal([]);
    expect(await delegate()).to.be.a('string');
    expect(other.failed).to.deep.equal([]);

    const row = page.locator(`li.delegation[data-mint="${mint}"]`);
    await resetStatus();
    await row.getByRole('button', { name: 'Revoke delegation' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await done(/^Done: the delegation on your .+ token account is revoked/);
    expect(await delegate()).to.equal(null);
    expect(await row.innerText()).to.include('revoked');
    expect(failed).to.deep.equal([]);
  });

  it('a token the service refuses is said in words, and the page asks to sign in again; without a wallet, a hint', async () => {
    const kept = JSON.parse(await page.evaluate<string>('sessionStorage.getItem("tributary.account")'));
    await page.evaluate(`sessionStorage.setItem("tributary.account", ${JSON.stringify(JSON.stringify({ ...kept, token: 'not-a-token' }))})`);
    await page.reload();
    await page.waitForSelector('body[data-state="signed-out"]');
    expect(await statusText()).to.match(/^Your subscriptions could not be read: Your sign-in is no longer valid \(.+\)\. Sign in with your wallet again\.$/);
    expect(await page.getByRole('button', { name: 'Sign in with wallet' }).isVisible()).to.equal(true);
    expect(await page.evaluate('sessionStorage.getItem("tributary.account")')).to.equal(null);

    const bare = await open(null, PHONE);
    await bare.page.goto(`${me.url}/account`);
    await bare.page.waitForSelector('body[data-state="signed-out"]');
    await bare.page.getByRole('button', { name: 'Sign in with wallet' }).click();
    await waitFor(async () => (await statusText(bare.page)) !== '', 10_000, 'the status line');
    expect(await statusText(bare.page)).to.equal('No Solana wallet found in this browser.');
    expect(await bare.page.locator('#wallet-hint').textContent()).to.include('Install a wallet that supports the Wallet Standard');
    await bare.page.screenshot({ path: path.join(SHOTS, 'account-signin-phone.png'), fullPage: true });
    expect(bare.failed).to.deep.equal([]);

    // an API node with every route module serves the page and documents it
    const full = await startTestApi(s.h.env, s.h.overrides);
    try {
      const html = await fetch(`${full.url}/account`);
      expect(html.status).to.equal(200);
      expect(await html.text()).to.include('Sign in with wallet');
      expect((await fetch(`${full.url}/account/app.js`)).status).to.equal(200);
      expect(await (await fetch(`${full.url}/openapi.yaml`)).text()).to.match(/\n {2}\/account:\n/);
    } finally {
      await full.close();
    }
  });
});
