/**
 * The merchant's view end to end, on a seeded localnet history, with processes started
 * as a user starts them (API node, notifier, projector) and the indexer in-process:
 * - revenue equals a direct sum over the archive in every bucket, then again after
 *   `tributary replay all`;
 * - the dashboard in Debian's Chromium (driven by playwright-core): sign-in with a
 *   pasted gateway JWT, the chart and tables render with the localnet's data, a payment
 *   the chain executes afterwards appears live, an export downloads. Screenshots go to
 *   DASHBOARD_SCREENSHOTS (default .artifacts/dashboard);
 * - the wallet path: a test wallet registered through the Wallet Standard (as browser
 *   wallets register) signs the gateway's challenge with the fixture authority's key,
 *   and the page signs in and loads the gateway's data; a subscriber the scheduler put
 *   past due shows as such.
 */
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import bs58 from 'bs58';
import { expect } from 'chai';
import { sql } from 'kysely';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { ROOT, runCli, startCli, waitFor, type Proc } from '../support/process.js';
import { archiveRevenue } from '../support/merchant-archive.js';
import { installTestWallet } from '../support/browser/test-wallet.js';
import { signIn } from '../integration/auth-fixtures.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { startIndexer, type RunningIndexer } from '../../infra/indexer/index.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { Keypair } from '@solana/web3.js';
import { deriveKeypair } from '../../src/kernel/domain/seeded-keypair.js';
import { pdas } from '../../infra/localnet/keys.js';
import { announce } from '../../commands/scheduler/lifecycle-events.js';
import { LIFECYCLE_VERSION } from '../../src/kernel/names/index.js';

const SEED = 'merchant-e2e';
const gatewayOf = (authority: Keypair): string => pdas.gateway(authority.publicKey).toBase58();

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SHOTS = path.resolve(ROOT, process.env['DASHBOARD_SCREENSHOTS'] ?? '.artifacts/dashboard');
const GROUPS = ['archive', 'payments', 'merchant'];

async function modelRevenue(env: TestEnv) {
  return env.db.selectFrom('merchant_revenue')
    .select(['gateway', 'token_mint', 'bucket', sql<string>`bucket_start::text`.as('bucket_start'), sql<string>`gross::text`.as('gross'),
      sql<string>`gateway_fee::text`.as('gateway_fee'), sql<string>`protocol_fee::text`.as('protocol_fee'), sql<string>`net::text`.as('net'),
      sql<string>`payments::text`.as('payments')])
    .where('payments', '>', '0').orderBy('gateway').orderBy('token_mint').orderBy('bucket').orderBy('bucket_start').execute();
}

describe('merchant dashboard on the localnet, in a real browser', function () {
  this.timeout(300_000);
  let env: TestEnv;
  let ln: Localnet;
  let indexer: RunningIndexer | undefined;
  let common: Record<string, string>;
  let url: string;
  let browser: Browser | undefined;
  const procs: Proc[] = [];

  const caughtUp = () => waitFor(async () => {
    const groups = await groupInfo(env.redis, env.keys.events);
    return GROUPS.every((g) => groups.some((x) => x.name === g && x.lag === 0 && x.pending === 0));
  }, 120_000, 'projections caught up');

  before(async function () {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
    env = await createTestEnv('merchant-e2e');
    ln = await startLocalnet({ port: 0, seed: SEED, rate: 40 });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    common = {
      ...env.env, HOST: '127.0.0.1', SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet',
      PROJECTOR_BLOCK_MS: '100', POOL_SYNC_INTERVAL_MS: '0', RATE_LIMIT_PER_MINUTE: '100000',
    };
    procs.push(startCli(['serve', '--role', 'api'], { ...common, PORT: String(port) }));
    procs.push(startCli(['serve', '--role', 'notifier'], common));
    procs.push(startCli(['serve', '--role', 'projector'], { ...common, PROJECTIONS: GROUPS.join(',') }));
    indexer = await startIndexer({ config: loadConfig(common), redis: env.redis, logger: createLogger('silent', 'indexer') });
    await waitFor(async () => (await fetch(`${url}/v1/health`).catch(() => undefined))?.ok, 60_000, 'api');
  });
  after(async () => {
    await browser?.close();
    await indexer?.stop();
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    await ln?.close();
    await env?.close();
  });

  it('revenue equals a direct sum over the archive for every bucket, before and after replay all', async () => {
    const archivedPayments = async () => Number((await env.db.selectFrom('events').select(sql<string>`count(*)`.as('n')).where('name', '=', 'PaymentRecord').executeTakeFirstOrThrow()).n);
    await waitFor(async () => (await archivedPayments()) >= 60, 180_000, '60 payments indexed and archived');
    // freeze the history the service sees: no new events while we compare
    await indexer!.stop();
    indexer = undefined;
    await caughtUp();
    const direct = await archiveRevenue(env.db);
    const payments = ln.ledger().filter((e) => e.name === 'PaymentRecord').length;
    expect(await archivedPayments()).to.be.at.least(60).and.at.most(payments);
    expect(direct.length).to.be.greaterThan(3);
    expect(await modelRevenue(env)).to.deep.equal(direct);
    const replay = await runCli(['replay', 'all'], common);
    expect(replay.code, replay.output).to.equal(0);
    expect(replay.output).to.include('merchant');
    expect(await modelRevenue(env)).to.deep.equal(direct);
    indexer = await startIndexer({ config: loadConfig(common), redis: env.redis, logger: createLogger('silent', 'indexer') });
  });

  /** Waits for the signed-in dashboard; on a timeout says what the page's status line and errors said. */
  async function dashboardShown(page: Page, failed: readonly string[]): Promise<void> {
    try {
      await page.waitForSelector('#dashboard:not([hidden])', { timeout: 90_000 });
    } catch (err) {
      const status = await page.locator('#status').textContent().catch(() => null);
      throw new Error(`dashboard not shown (status: ${status ?? '?'}; errors: ${failed.join(' | ')}): ${(err as Error).message.split('\n')[0]}`);
    }
  }

  /** The gateway with the most payments so far, and its authority's key. */
  function busiestGateway(): { gateway: string; authority: Keypair } {
    const counts = new Map<string, number>();
    for (const e of ln.ledger()) if (e.name === 'PaymentRecord') counts.set(e.data['gateway'], (counts.get(e.data['gateway']) ?? 0) + 1);
    const gateway = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
    // the fixture gateways' payments are the scheduler's (not run here); the workload pays on its own gateway, whose
    // authority the localnet derives from its seed like every key
    const authority = [...ln.fixtures.gateways.map((g) => Keypair.fromSecretKey(bs58.decode(g.authoritySecretKey))), deriveKeypair(SEED, 'workload-gateway-authority-0')]
      .find((k) => gatewayOf(k) === gateway);
    if (!authority) throw new Error(`no known authority for gateway ${gateway}`);
    return { gateway, authority };
  }

  it('the dashboard signs in with a pasted JWT, renders, shows a new payment live and downloads an export', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const { gateway, authority } = busiestGateway();
    const { token } = await signIn(url, gateway, { address: authority.publicKey.toBase58(), secretKey: authority.secretKey.slice(0, 32) });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    // bypassCSP: the page's CSP forbids eval, which the test's own waitForFunction probes use
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, bypassCSP: true });
    const page = await context.newPage();
    const failed: string[] = [];
    page.on('pageerror', (err) => failed.push(err.message));
    page.on('console', (m) => { if (m.type() === 'error') failed.push(`console: ${m.text()}`); });
    page.on('requestfailed', (r) => { if (!r.url().includes('/ws/v1')) failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`); });
    page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) failed.push(`off-origin request ${r.url()}`); });

    const res = await page.goto(`${url}/dashboard?gateway=${gateway}`);
    expect(res?.status()).to.equal(200);
    await page.getByLabel('Gateway JWT').fill(token);
    await page.getByRole('button', { name: 'Sign in with token' }).click({ noWaitAfter: true, timeout: 90_000 });
    await dashboardShown(page, failed);
    await page.waitForFunction(`[...document.querySelectorAll('#chart svg rect.bar')].some((r) => Number(r.getAttribute('height')) > 0)`);
    await page.waitForSelector('#subs-table tbody tr td.mono');
    await page.waitForSelector('body[data-live="on"]');
    const bars = await page.locator('#chart svg rect.bar').count();
    expect(bars).to.be.greaterThan(0);
    expect(await page.locator('#subs-table tbody tr').count()).to.be.greaterThan(0);
    expect(await page.locator('#live li[data-signature]').count()).to.be.greaterThan(0);
    await page.screenshot({ path: path.join(SHOTS, 'dashboard.png'), fullPage: true });

    // a payment the chain executes from now on shows up without a reload
    const before = new Set(await page.locator('#live li[data-signature]').evaluateAll((els) => els.map((e) => e.getAttribute('data-signature'))));
    // (a string: this project compiles without the DOM's types)
    await page.waitForFunction(`[...document.querySelectorAll('#live li.new[data-signature]')].some((e) => !${JSON.stringify([...before])}.includes(e.getAttribute('data-signature')))`, undefined, { timeout: 120_000 });
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-live.png'), fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Payments' }).click()]);
    expect(download.suggestedFilename()).to.match(new RegExp(`^tributary-payments-${gateway.slice(0, 8)}-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
    const file = path.join(SHOTS, download.suggestedFilename());
    await download.saveAs(file);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\r\n');
    expect(lines[0]).to.equal('time,signature,policy,payer,recipient,tokenMint,amount,recordId,trackingId');
    expect(lines.length).to.be.greaterThan(1);

    // narrow screens: the same page, one column
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-mobile.png'), fullPage: true });

    // the page under its own Content-Security-Policy (no bypass): it still signs in and renders
    const strict = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    const strictPage = await strict.newPage();
    strictPage.on('pageerror', (err) => failed.push(`strict: ${err.message}`));
    strictPage.on('console', (m) => { if (m.type() === 'error') failed.push(`strict console: ${m.text()}`); });
    await strictPage.goto(`${url}/dashboard?gateway=${gateway}`);
    await strictPage.getByLabel('Gateway JWT').fill(token);
    await strictPage.getByRole('button', { name: 'Sign in with token' }).click();
    await strictPage.waitForSelector('#subs-table tbody tr td.mono');
    await strictPage.waitForSelector('#chart svg rect.bar', { state: 'attached' });
    await strictPage.waitForSelector('body[data-live="on"]', { state: 'attached' });
    await strict.close();
    expect(failed).to.deep.equal([]);
  });

  it('signs in with a wallet through the Wallet Standard, loads the data, and shows a past-due subscriber', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const { gateway, authority } = busiestGateway();
    // the scheduler puts one of the gateway's subscribers past due (and bumps the cache version, as its role does)
    const firstSubscriber = () => env.db.selectFrom('merchant_subscribers').select(['payer', 'token_mint', 'policies']).where('gateway', '=', gateway)
      .where(sql<boolean>`cardinality(policies) > 0`).orderBy('payer').executeTakeFirst();
    await waitFor(async () => (await firstSubscriber()) !== undefined, 120_000, 'a subscriber of the gateway projected');
    /** every policy of the first subscriber put past due; returns the subscriber */
    const pastDueSubscriber = async () => {
      const sub = (await firstSubscriber())!;
      for (const policy of sub.policies) {
        await announce({ db: env.db, nowMs: () => Date.now(), recorded: () => env.redis.incr(env.keys.readVersion(LIFECYCLE_VERSION)) }, {
          name: 'subscription.past_due', key: `e2e-past-due:${policy}`, gateway, policy, trackingId: '', dueAt: null, details: {},
        });
      }
      return sub;
    };
    let sub = await pastDueSubscriber();

    browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    // bypassCSP for the test's own evaluate probes, as above
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const failed: string[] = [];
    page.on('pageerror', (err) => failed.push(err.message));
    page.on('console', (m) => { if (m.type() === 'error') failed.push(`console: ${m.text()}`); });
    // the wallet's key stays in this process: the page's wallet asks it to sign, as an extension's UI would
    const { signed } = await installTestWallet(page, authority);

    await page.goto(`${url}/dashboard?gateway=${gateway}`);
    await page.getByRole('button', { name: 'Sign in with wallet' }).click({ noWaitAfter: true, timeout: 90_000 });
    await dashboardShown(page, failed);
    await page.waitForSelector('#subs-table tbody tr td.mono');
    await page.waitForSelector('#chart svg rect.bar', { state: 'attached' });
    expect(signed, 'the wallet signed one challenge').to.have.length(1);
    expect(await page.locator('#who-gateway').textContent()).to.equal(gateway);
    // signed in as the gateway: the JWT the page keeps names it
    const session = JSON.parse(await page.evaluate<string>(`sessionStorage.getItem('tributary.dashboard') || '{}'`)) as { gateway?: string; token?: string };
    expect(session.gateway).to.equal(gateway);
    const claims = JSON.parse(Buffer.from(session.token!.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string; role: string };
    expect(claims).to.include({ sub: gateway, role: 'gateway' });
    // the subscribers table: the past-due subscriber says so
    const pastDueCell = async () => {
      const row = page.locator('#subs-table tbody tr', { has: page.locator(`td[title="${sub.payer}"]`) })
        .filter({ has: page.locator(`td[title="${sub.token_mint}"]`) });
      await row.first().waitFor();
      return row.first().locator('td').last().textContent();
    };
    // the localnet's workload (40 events/s) may delete the subscriber's policies meanwhile, which ends
    // its past due rightly: then another subscriber is put past due, and the page reloaded
    for (let tries = 1; (await pastDueCell()) !== 'yes' && tries < 3; tries += 1) {
      const now = await env.db.selectFrom('merchant_subscribers').select('policies').where('gateway', '=', gateway)
        .where('payer', '=', sub.payer).where('token_mint', '=', sub.token_mint).executeTakeFirst();
      expect(now?.policies.some((p) => sub.policies.includes(p)), 'a past-due policy still the subscriber\'s shows "no"').to.equal(false);
      sub = await pastDueSubscriber();
      await page.reload(); // the session resumes from sessionStorage
      await dashboardShown(page, failed);
      await page.waitForSelector('#subs-table tbody tr td.mono');
    }
    expect(await pastDueCell()).to.equal('yes');
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-wallet.png'), fullPage: true });
    await context.close();
    expect(failed).to.deep.equal([]);
  });
});
