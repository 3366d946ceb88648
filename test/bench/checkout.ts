/**
 * The hosted checkout page's time to interactive on localhost: from navigation to the moment
 * the Subscribe button is enabled (the session's terms read, a wallet found), p50 and p99 over
 * BENCH_CHECKOUT_LOADS loads in Chromium, each in a fresh context (a first visit: nothing
 * cached), timed in the page (performance.now() when the button loses `disabled`). Beside
 * it, in the same loads, domContentLoaded (the HTML, stylesheet and script parsed), and the
 * page's JavaScript weight gzipped against the 150 KB budget.
 */
import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { chromium } from 'playwright-core';
import { startX402 } from '../integration/x402-harness.js';
import { signIn } from '../integration/auth-fixtures.js';
import { startTestApi } from '../support/app.js';
import { installTestWallet } from '../support/browser/test-wallet.js';
import { percentile, report } from './harness.js';

const LOADS = Number(process.env['BENCH_CHECKOUT_LOADS'] ?? 50);
const WARMUP = 5;
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Run before the page's own script: notes when #pay is first enabled. */
const PROBE = `new MutationObserver((changes, observer) => {
  for (const c of changes) {
    if (c.target.id === 'pay' && !c.target.disabled) { window.__interactive = performance.now(); observer.disconnect(); return; }
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['disabled'] });`;

async function sessionUrl(apiUrl: string, token: string, requirement: unknown): Promise<string> {
  const res = await fetch(`${apiUrl}/v1/checkout/sessions`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ requirement, trackingId: 'bench-checkout', successUrl: 'http://127.0.0.1:9/ok', cancelUrl: 'http://127.0.0.1:9/no', expiresInSeconds: 3600 }),
  });
  if (res.status !== 201) throw new Error(`session not created: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { url: string }).url;
}

export async function benchCheckout(): Promise<void> {
  process.stdout.write('checkout page\n');
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}`);
  const h = await startX402('bench_checkout', { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' });
  const api = await startTestApi(h.env, { ...h.overrides, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  try {
    const fixture = h.ln.fixtures.gateways[0]!;
    const authority = Keypair.fromSecretKey(bs58.decode(fixture.authoritySecretKey));
    const { token } = await signIn(api.url, fixture.address, { address: authority.publicKey.toBase58(), secretKey: authority.secretKey.slice(0, 32) });
    const requirement = (await h.accepts()).find((a) => a.scheme === 'deferred');
    const url = await sessionUrl(api.url, token, requirement);
    const payer = h.payer();
    const tti: number[] = [];
    const dcl: number[] = [];
    for (let i = 0; i < WARMUP + LOADS; i += 1) {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
      await installTestWallet(context, payer);
      await context.addInitScript({ content: PROBE });
      const page = await context.newPage();
      await page.goto(url);
      await page.waitForSelector('#pay:not([disabled])');
      // (a string: this project compiles without the DOM's types)
      const t = await page.evaluate<{ interactive: number; dcl: number }>(
        `({ interactive: window.__interactive ?? NaN, dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd })`);
      await context.close();
      if (i >= WARMUP) { tti.push(t.interactive); dcl.push(t.dcl); }
    }
    tti.sort((a, b) => a - b);
    dcl.sort((a, b) => a - b);
    for (const p of [50, 99] as const) {
      report({
        name: `checkout page, navigation → Subscribe enabled, ${LOADS} first visits, p${p}`, value: percentile(tti, p), unit: 'ms',
        baseline: { name: `domContentLoaded p${p}`, value: percentile(dcl, p) }, higherIsBetter: false,
      });
    }
    const js = await (await fetch(`${api.url}/checkout/app.js`)).arrayBuffer();
    const gz = gzipSync(Buffer.from(js)).length / 1024;
    report({ name: `checkout page JavaScript, gzipped (${(js.byteLength / 1024).toFixed(1)} KB minified)`, value: gz, unit: 'KB', baseline: { name: 'budget', value: 150 }, higherIsBetter: false, goal: 1 });
  } finally {
    await browser.close();
    await api.close();
    await h.close();
  }
}
