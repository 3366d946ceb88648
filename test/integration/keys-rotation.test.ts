/**
 * Signing keys as users see them: the first key at first start (once, with two nodes
 * starting together), encrypted at rest, published at /v1/jwks and its alias, rotated
 * by the admin route with every error in the envelope, followed by the other node at
 * once, and tokens of the old key valid exactly until the grace period ends.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { createTokenVerifier } from '../../commands/x402/client/verify-token.js';
import { rotateKeys } from '../../infra/signing-keys/rotate.js';
import { startApiServer } from '../../src/app/api-server.js';
import { createDb } from '../../infra/postgres/database.js';
import { expectError, insertGateway, movableClock, newWallet, nodeWith, postJson, signIn } from './auth-fixtures.js';

const GRACE = 600;
const ADMIN = 'admin-secret-for-tests';

describe('signing keys, JWKS and rotation', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let a: TestApi;
  let b: TestApi;
  const clock = movableClock();
  const settings = () => ({
    SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    TRIBUTARY_DEV_MODE: 'false',
    ADMIN_API_KEY: ADMIN,
    KEY_GRACE_PERIOD_SECONDS: String(GRACE),
    SOLANA_RPC_URL: 'http://127.0.0.1:1', // no chain: gateways come from the read model
  });
  let shared: Record<string, string>;

  before(async () => {
    env = await createTestEnv('keys-rotation');
    shared = settings();
    // two nodes starting at the same moment on an empty key table
    [a, b] = await Promise.all([startTestApi(env, shared, { clock }), startTestApi(env, shared, { clock })]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await env?.close();
  });

  const jwks = async (api: TestApi, path = '/v1/jwks') => {
    const res = await fetch(`${api.url}${path}`);
    expect(res.status).to.equal(200);
    return { res, body: (await res.json()) as { keys: Record<string, string>[] } };
  };
  const kids = async (api: TestApi) => (await jwks(api)).body.keys.map((k) => k.kid);

  it('makes one first key, whichever node starts first, and publishes it on both paths', async () => {
    const [fromA, fromB] = [await jwks(a), await jwks(b)];
    expect(fromA.body.keys).to.have.length(1);
    expect(fromB.body).to.deep.equal(fromA.body);
    const key = fromA.body.keys[0]!;
    expect(Object.keys(key).sort()).to.deep.equal(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(key).to.include({ kty: 'EC', alg: 'ES256', use: 'sig', crv: 'P-256' });
    expect(key['kid']).to.match(/^\d{4}-\d{2}-\d{2}-[0-9a-f]{4}$/);
    expect(fromA.res.headers.get('cache-control')).to.equal('public, max-age=3600');
    const alias = await jwks(a, '/.well-known/jwks.json');
    expect(alias.body).to.deep.equal(fromA.body);
    expect(alias.res.headers.get('cache-control')).to.equal('public, max-age=3600');
    const rows = await env.db.selectFrom('signing_keys').select('kid').execute();
    expect(rows).to.have.length(1);
  });

  it('keeps the private key encrypted at rest', async () => {
    const row = await env.db.selectFrom('signing_keys').select(['private_jwk', 'public_jwk']).executeTakeFirstOrThrow();
    expect(row.private_jwk).to.match(/^aes-256-gcm:v1:/);
    expect(row.public_jwk).to.not.have.property('d');
  });

  it('refuses to start without SIGNING_KEY_ENCRYPTION_KEY outside development mode', async () => {
    let error: unknown;
    try {
      const api = await startTestApi(env, { TRIBUTARY_DEV_MODE: 'false' });
      await api.close();
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/SIGNING_KEY_ENCRYPTION_KEY/);
  });

  it('answers the admin route errors in the envelope: 401 missing, 401 wrong, 403 when no admin key is configured', async () => {
    expect(await expectError(await postJson(`${a.url}/v1/admin/keys/rotate`, {}), 401)).to.match(/x-admin-key/);
    await expectError(await postJson(`${a.url}/v1/admin/keys/rotate`, {}, { 'x-admin-key': 'wrong' }), 401);
    await expectError(await postJson(`${a.url}/v1/admin/keys/rotate`, {}, { 'x-admin-key': `${ADMIN}x` }), 401);
    const { ADMIN_API_KEY: _omit, ...noAdmin } = shared;
    const c = await startTestApi(env, noAdmin, { clock });
    try {
      expect(await expectError(await postJson(`${c.url}/v1/admin/keys/rotate`, {}, { 'x-admin-key': ADMIN }), 403)).to.match(/ADMIN_API_KEY/);
    } finally {
      await c.close();
    }
    expect(await kids(a)).to.have.length(1);
  });

  it('rotates; the other node publishes and signs with the new key at once; old tokens verify until the grace period ends', async () => {
    const owner = await newWallet();
    const gateway = await insertGateway(env.db, owner.address);
    const before = await signIn(a.url, gateway, owner);
    const [oldKid] = await kids(a);

    const res = await postJson(`${a.url}/v1/admin/keys/rotate`, {}, { 'x-admin-key': ADMIN });
    expect(res.status).to.equal(200);
    const r = (await res.json()) as { message: string; newKid: string; oldKid: string; gracePeriodEndsAt: string };
    expect(r.oldKid).to.equal(oldKid);
    expect(r.newKid).to.not.equal(oldKid);
    expect(r.message).to.be.a('string');
    expect(r.gracePeriodEndsAt).to.equal(new Date(clock.now() + GRACE * 1000).toISOString());

    // node B heard of it through Redis pub/sub (well within its cache TTL)
    const deadline = Date.now() + 2000;
    while (!(await kids(b)).includes(r.newKid) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
    expect(await kids(b)).to.deep.equal([r.newKid, r.oldKid]);
    const after = await signIn(b.url, gateway, owner);
    const header = JSON.parse(Buffer.from(after.token.split('.')[0]!, 'base64url').toString()) as { kid: string };
    expect(header.kid).to.equal(r.newKid);

    const verifyAt = async (token: string) => {
      const v = createTokenVerifier({ jwksUrl: `${b.url}/v1/jwks`, now: () => clock.now(), audience: `tributary-api:gateway-session:${gateway}` });
      return v.verify(token).then(() => true, () => false);
    };
    expect(await verifyAt(before.token)).to.equal(true);
    expect(await verifyAt(after.token)).to.equal(true);
    clock.advance(GRACE - 1);
    expect(await verifyAt(before.token)).to.equal(true);
    clock.advance(2);
    expect(await verifyAt(before.token), 'old key retired').to.equal(false);
    expect(await verifyAt(after.token)).to.equal(true);
    expect(await kids(a)).to.deep.equal([r.newKid]);
    expect(await kids(b)).to.deep.equal([r.newKid]);
  });

  it('rotates from the shell (rotateKeys) and every node follows', async () => {
    const [current] = await kids(a);
    const out = await rotateKeys(a.ctx);
    expect(out.oldKid).to.equal(current);
    const deadline = Date.now() + 2000;
    while (!(await kids(b)).includes(out.newKid) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
    expect(await kids(a)).to.deep.equal([out.newKid, out.oldKid]);
    expect(await kids(b)).to.deep.equal([out.newKid, out.oldKid]);
  });
  it('503 in the envelope when the key store is unreachable', async () => {
    const down = createDb('postgres://root@127.0.0.1:1/unreachable', 1, 'down');
    const server = await startApiServer(nodeWith(a.ctx, { db: down, dbRead: down }), { port: 0, host: '127.0.0.1' });
    try {
      await expectError(await fetch(`${server.url}/v1/jwks`), 503);
      await expectError(await fetch(`${server.url}/.well-known/jwks.json`), 503);
      await expectError(await postJson(`${server.url}/v1/admin/keys/rotate`, {}, { 'x-admin-key': ADMIN }), 503);
    } finally {
      await server.close();
      await down.destroy();
    }
  });
});
