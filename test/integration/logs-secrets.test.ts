/**
 * Structured logs carry no secrets: an API node process at LOG_LEVEL=trace, configured with
 * every secret (admin key, catalog key, signing-key encryption key and a previous one), serves requests that
 * carry secrets in x-admin-key, Authorization, Payment and Cookie headers, calls the token
 * catalog with its key, and fails some of them; not one secret value reaches its output,
 * and every line of it is a JSON log record.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { freePort } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { NO_VENUES } from '../support/upstreams/fixtures.js';

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
const ADMIN = secret('admin');
const TOKENS_KEY = secret('catalog');
const ENCRYPTION_KEY = randomBytes(32).toString('hex');
const PREVIOUS_KEY = randomBytes(32).toString('hex');
const BEARER = secret('bearer');
const WRONG_ADMIN = secret('wrong-admin');
const PAYMENT = Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'deferred', payload: { serializedTransaction: secret('payment') } })).toString('base64');
const COOKIE = secret('cookie');

describe('logs without secrets', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let jup: JupiterStandIn;
  let api: Proc;
  let url: string;

  before(async () => {
    env = await createTestEnv('logs-secrets');
    jup = await startJupiterStandIn({ apiKey: TOKENS_KEY });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = startCli(['serve', '--role', 'api'], {
      ...env.env, LOG_LEVEL: 'trace', PORT: String(port), HOST: '127.0.0.1', SOLANA_RPC_URL: 'http://127.0.0.1:1',
      ADMIN_API_KEY: ADMIN, TOKENS_API_KEY: TOKENS_KEY, TOKENS_API_URL: jup.url, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY, SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: PREVIOUS_KEY,
      TRIBUTARY_DEV_MODE: 'false', POOL_SYNC_INTERVAL_MS: '0', ...NO_VENUES,
    });
    await waitFor(async () => (await fetch(`${url}/v1/health`)).ok, 30_000, 'the API node');
  });
  after(async () => {
    if (api.child.exitCode === null) api.child.kill('SIGKILL');
    await jup.close();
    await env.close();
  });

  it('keeps every secret out of the output, and every line is structured', async () => {
    const asked: [string, RequestInit][] = [
      ['/v1/webhooks', { headers: { 'x-admin-key': ADMIN } }],
      ['/v1/webhooks', { headers: { 'x-admin-key': WRONG_ADMIN } }],
      ['/v1/admin/keys/rotate', { method: 'POST', headers: { 'x-admin-key': ADMIN } }],
      ['/v1/webhooks', { method: 'POST', headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ gateway_pubkey: 'So11111111111111111111111111111111111111112', endpoint_url: 'https://hooks.example/x' }) }],
      ['/v1/gateway/So11111111111111111111111111111111111111112/merchant/policies', { headers: { authorization: `Bearer ${BEARER}` } }],
      ['/v1/webhooks/1', { headers: { authorization: `Bearer ${BEARER}`, cookie: `session=${COOKIE}` } }],
      ['/v1/x402/demo', { headers: { payment: PAYMENT } }],
      ['/v1/tokens/issue', { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`u:${BEARER}`).toString('base64')}`, 'content-type': 'application/json' }, body: '{"walletPublicKey": 1' }],
      ['/v1/assets/search?q=USDC', {}],
      ['/v1/nowhere', { headers: { 'x-admin-key': ADMIN, authorization: `Bearer ${BEARER}` } }],
    ];
    const statuses = [];
    for (const [path, init] of asked) statuses.push((await fetch(`${url}${path}`, init)).status);
    expect(statuses.slice(0, 3)).to.deep.equal([200, 401, 200]);
    expect(statuses.every((s) => s < 500), `statuses ${statuses.join(',')}`).to.equal(true);
    expect(jup.calls.some((c) => JSON.stringify(c.headers).includes(TOKENS_KEY)), 'the catalog got its key').to.equal(true);

    api.child.kill('SIGTERM');
    expect(await api.exited).to.equal(0);
    const output = api.output();
    expect(output).to.match(/"msg":"request completed"/); // the requests were logged, at trace with their details
    for (const [name, value] of Object.entries({ ADMIN, TOKENS_KEY, ENCRYPTION_KEY, PREVIOUS_KEY, BEARER, WRONG_ADMIN, PAYMENT, COOKIE })) {
      expect(output.includes(value), `${name} in the logs`).to.equal(false);
    }
    expect(output.includes(Buffer.from(ENCRYPTION_KEY, 'hex').toString('base64')), 'the encryption key, base64').to.equal(false);
    expect(output.includes(Buffer.from(PREVIOUS_KEY, 'hex').toString('base64')), 'the previous encryption key, base64').to.equal(false);
    const lines = output.split('\n').filter((l) => l.trim() !== '');
    const unstructured = lines.filter((l) => { try { return typeof (JSON.parse(l) as { level?: unknown }).level !== 'number'; } catch { return true; } });
    expect(unstructured, 'lines that are not JSON log records').to.deep.equal([]);
  });
});
