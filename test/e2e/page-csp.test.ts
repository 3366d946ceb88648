/**
 * Issue 41, finding 7, in Debian's Chromium (playwright-core): under the pages' own
 * Content-Security-Policy (no bypass), a script on the dashboard cannot open a WebSocket
 * or a fetch to another origin (a listener on another port of the same host sees no
 * request at all, and the browser reports the violation), while the page's own Socket.IO
 * (the global `io` the dashboard loads) and its fetches to this origin still work: CSP3's
 * 'self' covers the same origin's ws:.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

interface Probe { other: string; otherFetch: string; own: string; socket: string; health: number; violations: string[] }

describe('page CSP in a real browser: this origin only', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let api: TestApi;
  let browser: Browser;
  let other: Server;
  let otherPort = 0;
  // every request and upgrade the other origin's listener receives
  const reached: string[] = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
    env = await createTestEnv('page-csp');
    api = await startTestApi(env, {}, { attachments: [realtimeAttachment()] });
    other = createServer((req, res) => { reached.push(`${req.method} ${req.url}`); res.writeHead(200, { 'access-control-allow-origin': '*' }).end('ok'); });
    other.on('upgrade', (req, socket) => { reached.push(`upgrade ${req.url}`); socket.destroy(); });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherPort = (other.address() as AddressInfo).port;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  });
  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => { if (other) other.close(() => resolve()); else resolve(); });
    await api?.close();
    await env?.close();
  });

  it('the dashboard\'s scripts reach this origin over fetch and Socket.IO, and no other origin', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const res = await page.goto(`${api.url}/dashboard`);
    expect(res?.status()).to.equal(200);
    expect(res?.headers()['content-security-policy']).to.contain("connect-src 'self'");
    // a string evaluated by the DevTools protocol, not by the page's eval (which the CSP forbids);
    // this project compiles without the DOM's types
    const probe = await page.evaluate<Probe>(`(async () => {
      const violations = [];
      document.addEventListener('securitypolicyviolation', (e) => violations.push(e.effectiveDirective + ' ' + e.blockedURI));
      const tryWs = (url) => new Promise((resolve) => {
        let ws;
        try { ws = new WebSocket(url); } catch (e) { resolve('threw ' + e.name); return; }
        ws.onopen = () => { ws.close(); resolve('open'); };
        ws.onerror = () => resolve('error');
      });
      const other = await tryWs('ws://127.0.0.1:${otherPort}/steal');
      const otherFetch = await fetch('http://127.0.0.1:${otherPort}/steal').then(() => 'fetched', () => 'refused');
      const own = await tryWs(location.origin.replace(/^http/, 'ws') + '/ws/v1/?EIO=4&transport=websocket');
      const socket = await new Promise((resolve) => {
        const s = io({ path: '/ws/v1', transports: ['websocket'], reconnection: false });
        s.on('connect', () => { s.close(); resolve('connected'); });
        s.on('connect_error', (e) => { s.close(); resolve('connect_error ' + e.message); });
      });
      const health = (await fetch('/v1/health')).status;
      await new Promise((r) => setTimeout(r, 200));
      return { other, otherFetch, own, socket, health, violations };
    })()`);
    await context.close();

    expect(reached, 'requests the other origin received').to.deep.equal([]);
    expect(probe.other).to.not.equal('open');
    expect(probe.otherFetch).to.equal('refused');
    expect(probe.violations.filter((v) => v.startsWith('connect-src') && v.includes(`127.0.0.1:${otherPort}`)).length).to.be.greaterThan(0);
    expect(probe.own).to.equal('open');
    expect(probe.socket).to.equal('connected');
    expect(probe.health).to.be.oneOf([200, 503]);
  });
});
