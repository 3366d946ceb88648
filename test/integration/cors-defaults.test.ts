/**
 * Issue 41, finding 7: CORS defaults. CORS_ORIGINS defaults to the service's own origin
 * (PUBLIC_BASE_URL's, else http://localhost:PORT), so another site's preflight gets no
 * Access-Control-Allow-Origin, on the HTTP API and on Socket.IO's handshake; the allowed
 * request headers are a fixed list, never the ones a preflight asks for; x-admin-key is
 * never allowed cross-origin, whatever the setting; `*` answers any origin with `*` and the
 * credential-free headers only, and Access-Control-Allow-Credentials is never sent.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { loadConfig, ConfigError } from '../../src/kernel/config/config.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';

const OWN = 'https://pay.example.com';
const EVIL = 'https://evil.example';
const SHOP = 'https://shop.example';
const ADMIN_PATH = '/v1/admin/keys/rotate';

describe('CORS defaults (issue 41, finding 7)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  const apis: TestApi[] = [];
  const start = async (overrides: Record<string, string>, realtime = false): Promise<TestApi> => {
    const api = await startTestApi(env, overrides, realtime ? { attachments: [realtimeAttachment()] } : {});
    apis.push(api);
    return api;
  };
  const preflight = (api: TestApi, path: string, origin: string, headers: string, method = 'POST') => fetch(`${api.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
  const allowed = (res: Response): string[] => (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',').map((s) => s.trim()).filter((s) => s.length > 0);

  before(async () => { env = await createTestEnv('cors-defaults'); });
  after(async () => {
    for (const a of apis) await a.close();
    await env?.close();
  });

  it('defaults to the service\'s own origin: PUBLIC_BASE_URL\'s, else http://localhost:PORT', () => {
    expect(loadConfig({ ...env.env, PORT: '3002', PUBLIC_BASE_URL: 'https://pay.example.com/base/' }).http.corsOrigins).to.deep.equal([OWN]);
    expect(loadConfig({ ...env.env, PORT: '4010', PUBLIC_BASE_URL: undefined }).http.corsOrigins).to.deep.equal(['http://localhost:4010']);
    // named origins are kept as origins; `*` is kept as the operator wrote it
    expect(loadConfig({ ...env.env, CORS_ORIGINS: `${SHOP}/, *` }).http.corsOrigins).to.deep.equal([SHOP, '*']);
  });

  it('refuses a CORS_ORIGINS entry that is not an origin (a typo would otherwise allow nothing, silently)', () => {
    for (const bad of ['shop.example', 'https://shop.example/path', 'ftp://shop.example', 'null']) {
      expect(() => loadConfig({ ...env.env, CORS_ORIGINS: bad }), bad).to.throw(ConfigError, /CORS_ORIGINS/);
    }
  });

  it('by default, another origin\'s preflight and request get no Access-Control-Allow-Origin; the service\'s own origin does', async () => {
    const api = await start({ PUBLIC_BASE_URL: OWN });
    const evil = await preflight(api, '/v1/me/subscriptions', EVIL, 'authorization', 'GET');
    expect(evil.headers.get('access-control-allow-origin')).to.equal(null);
    const evilGet = await fetch(`${api.url}/v1/health`, { headers: { origin: EVIL } });
    expect(evilGet.headers.get('access-control-allow-origin')).to.equal(null);
    expect(evilGet.headers.get('vary') ?? '').to.match(/origin/i);

    const own = await preflight(api, '/v1/me/subscriptions', OWN, 'authorization', 'GET');
    expect(own.status).to.equal(204);
    expect(own.headers.get('access-control-allow-origin')).to.equal(OWN);
    expect(allowed(own)).to.include('authorization');
    expect(own.headers.get('access-control-allow-credentials')).to.equal(null);
    const ownGet = await fetch(`${api.url}/v1/health`, { headers: { origin: OWN } });
    expect(ownGet.headers.get('access-control-allow-origin')).to.equal(OWN);
    expect(ownGet.headers.get('access-control-expose-headers')).to.contain('Payment-Required');
  });

  it('never allows x-admin-key cross-origin, and never reflects the headers a preflight asks for', async () => {
    const any = await start({ CORS_ORIGINS: '*' });
    const named = await start({ CORS_ORIGINS: SHOP });
    for (const [api, origin] of [[any, EVIL], [named, SHOP]] as const) {
      const res = await preflight(api, ADMIN_PATH, origin, 'x-admin-key,content-type');
      expect(allowed(res), origin).to.not.include('x-admin-key');
      expect(allowed(res), origin).to.include('content-type');
      const odd = await preflight(api, '/v1/events', origin, 'x-something-else', 'GET');
      expect(allowed(odd), origin).to.not.include('x-something-else');
      expect(res.headers.get('access-control-allow-credentials'), origin).to.equal(null);
    }
  });

  it('`*` answers any origin with `*` and the credential-free headers; a named origin may send Authorization and x-api-key', async () => {
    const mixed = await start({ CORS_ORIGINS: `*,${SHOP}` });
    const evil = await preflight(mixed, '/v1/x402/demo', EVIL, 'payment-signature,authorization', 'GET');
    expect(evil.headers.get('access-control-allow-origin')).to.equal('*');
    expect(allowed(evil)).to.include('payment-signature');
    expect(allowed(evil)).to.not.include('authorization');
    expect(allowed(evil)).to.not.include('x-api-key');
    expect(evil.headers.get('access-control-allow-credentials')).to.equal(null);
    expect(evil.headers.get('vary') ?? '').to.match(/origin/i);

    const shop = await preflight(mixed, '/v1/x402/demo', SHOP, 'authorization', 'GET');
    expect(shop.headers.get('access-control-allow-origin')).to.equal(SHOP);
    expect(allowed(shop)).to.include.members(['authorization', 'x-api-key', 'payment-signature']);
    expect(shop.headers.get('vary') ?? '').to.match(/origin/i);
  });

  it('Socket.IO\'s handshake follows the same default: another origin gets no Access-Control-Allow-Origin', async () => {
    const api = await start({ PUBLIC_BASE_URL: OWN }, true);
    const handshake = (origin: string) => fetch(`${api.url}/ws/v1/?EIO=4&transport=polling`, { headers: { origin } });
    const evil = await handshake(EVIL);
    expect(evil.headers.get('access-control-allow-origin')).to.equal(null);
    const own = await handshake(OWN);
    expect(own.status).to.equal(200);
    expect(own.headers.get('access-control-allow-origin')).to.equal(OWN);
    expect(own.headers.get('access-control-allow-credentials')).to.equal(null);
  });
});
