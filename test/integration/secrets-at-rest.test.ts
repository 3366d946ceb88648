/**
 * Secrets at rest across configuration changes (issue 41, findings 2 and 3).
 *
 * Upgrade: a development run (no SIGNING_KEY_ENCRYPTION_KEY) keeps every secret `plain:`
 * (the JWT signing key, a webhook's current and previous secret, a scheduler signer, an
 * exact fee payer). A node started with a key seals them all, logging each by kind and
 * row and never the secret, and everything opens afterwards: the JWKS, a token issued
 * before, a new sign-in, the webhook signature, the signer and the fee payer.
 *
 * Wrong key: a node started with another key than the one the secrets were sealed under
 * still publishes the JWKS and verifies tokens issued before (public keys only); issuing
 * answers 503 with the reason; /v1/health answers degraded naming the key; the start log
 * names every secret it cannot open.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { createTestEnv, type TestEnv } from '../support/env.js';
import type { TestApi } from '../support/app.js';
import type { AppContext } from '../../src/app/context.js';
import type { Logger } from '../../infra/log/logger.js';
import { signedHeaders, signWithKeys } from '../../commands/webhooks/delivery/signer.js';
import { createSecretKeys } from '../../commands/webhooks/delivery/secret-keys.js';
import { activeSigners, delegateGateway } from '../../commands/scheduler/signers.js';
import { ensureFeePayer, loadFeePayers } from '../../commands/x402/exact/fee-payers.js';
import { runCli } from '../support/process.js';
import { startWebhooksRole } from '../../src/app/roles/webhooks.js';
import { checkSecretsAtStart, ROLE_SECRETS } from '../../src/app/secrets.js';
import { expectError, insertGateway, newWallet, postJson, signIn, type Wallet } from './auth-fixtures.js';
import { ADMIN, bearer, captureLogs, COLUMNS, DEV, kidOf, NETWORK, plainCount, seedSecrets, startApi, withKey, type SeededSecrets } from './secrets-fixtures.js';

/** What a development run leaves behind: a secret of every kind, in plaintext. */
const developmentRun = (env: TestEnv, logger?: Logger): Promise<SeededSecrets> => seedSecrets(env, undefined, logger);

describe('secrets at rest: sealed after a development run, and a wrong key reported', function () {
  this.timeout(60_000);

  describe('a node started with SIGNING_KEY_ENCRYPTION_KEY after a development run', () => {
    let env: TestEnv;
    let data: SeededSecrets;
    let api: TestApi;
    const logs = captureLogs();
    const devLogs = captureLogs();
    const key = randomBytes(32).toString('hex');

    before(async () => {
      env = await createTestEnv('secrets-upgrade');
      data = await developmentRun(env, devLogs.logger);
      expect(Object.values(await plainCount(env)).every((n) => n === 1), JSON.stringify(await plainCount(env))).to.equal(true);
      api = await startApi(env, withKey(key), logs.logger);
    });
    after(async () => {
      await api?.close();
      await env?.close();
    });

    it('warned in development mode naming every kind of secret kept in plaintext', () => {
      const banner = devLogs.lines().find((l) => String(l['msg']).includes('DEVELOPMENT MODE'));
      expect(banner?.['level']).to.equal(40);
      for (const kind of ['JWT signing keys', 'scheduler signer secrets', 'webhook signing secrets', 'fee payer keys']) expect(String(banner?.['msg'])).to.include(kind);
    });

    it('leaves no plaintext secret in any column, each sealed under the key', async () => {
      expect(await plainCount(env)).to.deep.equal(Object.fromEntries(COLUMNS.map(([t, c]) => [`${t}.${c}`, 0])));
      const kinds = await env.db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', data.webhookId).executeTakeFirstOrThrow();
      expect(kinds.secret).to.match(/^aes-256-gcm:v1:/);
      expect(kinds.previous_secret).to.match(/^aes-256-gcm:v1:/);
    });

    it('logs each sealing by kind and row, never the secret', () => {
      const sealed = logs.lines().filter((l) => l['msg'] === 'plaintext secret sealed under SIGNING_KEY_ENCRYPTION_KEY');
      const named = sealed.map((l) => `${String(l['kind'])}:${String(l['row'])}`).sort();
      expect(named).to.deep.equal([
        `fee payer key:${data.feePayer}`, `scheduler signer secret:${data.gateway}`, `signing key:${data.kid}`,
        `webhook previous secret:${data.webhookId}`, `webhook secret:${data.webhookId}`,
      ].sort());
      const text = logs.text();
      for (const secret of [data.secret, data.previous, data.secret.slice(6), data.previous.slice(6)]) expect(text).to.not.include(secret);
      expect(text).to.not.match(/"d":"/); // no private JWK
    });

    it('publishes the same key, verifies the token issued before, and signs new ones', async () => {
      const res = await fetch(`${api.url}/v1/jwks`);
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid)).to.deep.equal([data.kid]);
      expect((await fetch(`${api.url}/v1/gateway/${data.gateway}/merchant/policies`, bearer(data.token))).status).to.equal(200);
      const fresh = await signIn(api.url, data.gateway, data.owner);
      expect((await fetch(`${api.url}/v1/gateway/${data.gateway}/merchant/policies`, bearer(fresh.token))).status).to.equal(200);
    });

    it('signs webhook deliveries with both secrets, a scheduler signer and a fee payer that open', async () => {
      const row = await env.db.selectFrom('webhooks').select(['id as webhook_id', 'secret', 'previous_secret', 'previous_secret_until'])
        .where('id', '=', data.webhookId).executeTakeFirstOrThrow();
      const keys = createSecretKeys(Buffer.from(key, 'hex'), () => Date.now())(row);
      const body = '{"event":"x"}';
      const now = Date.now();
      // what the delivery worker sends is what a receiver holding either secret verifies
      expect(signWithKeys(keys, 'msg_1', now, body)).to.deep.equal(signedHeaders([data.secret, data.previous], 'msg_1', now, body));
      const signers = await activeSigners(env.db, Buffer.from(key, 'hex'));
      expect(signers.get(data.gateway)).to.not.equal(undefined);
      const payers = await loadFeePayers(env.db, NETWORK, Date.now(), Buffer.from(key, 'hex'));
      expect(payers.map((p) => p.address)).to.deep.equal([data.feePayer]);
    });

    it('answers ok on /v1/health', async () => {
      const body = ((await (await fetch(`${api.url}/v1/health`)).json()) as { data: { status: string; checks: Record<string, boolean> } }).data;
      expect(body.status).to.equal('ok');
      expect(body.checks['secrets']).to.equal(true);
    });
  });

  describe('a node started with the wrong SIGNING_KEY_ENCRYPTION_KEY', () => {
    let env: TestEnv;
    let api: TestApi;
    const logs = captureLogs();
    let owner: Wallet;
    let gateway: string;
    let token: string;
    let kid: string;
    let webhookId: number;
    let feePayer: string;

    before(async () => {
      env = await createTestEnv('secrets-wrong-key');
      const rightKey = randomBytes(32).toString('hex');
      const right = await startApi(env, withKey(rightKey));
      try {
        owner = await newWallet();
        gateway = await insertGateway(env.db, owner.address);
        ({ token } = await signIn(right.url, gateway, owner));
        kid = kidOf(token);
        const res = await postJson(`${right.url}/v1/webhooks`, { gateway_pubkey: owner.address, endpoint_url: 'https://8.8.8.8/hook' }, { 'x-admin-key': ADMIN });
        expect(res.status).to.equal(201);
        webhookId = ((await res.json()) as { id: number }).id;
        await delegateGateway(env.db, { gateway, authority: owner.address, encryptionKey: Buffer.from(rightKey, 'hex') });
        ({ address: feePayer } = await ensureFeePayer(env.db, { network: NETWORK, nowMs: Date.now(), encryptionKey: Buffer.from(rightKey, 'hex') }));
      } finally {
        await right.close();
      }
      api = await startApi(env, withKey(randomBytes(32).toString('hex')), logs.logger);
    });
    after(async () => {
      await api?.close();
      await env?.close();
    });

    const reason = () => `signing key ${kid} cannot be opened: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`;

    it('still publishes the JWKS', async () => {
      const res = await fetch(`${api.url}/v1/jwks`);
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid)).to.deep.equal([kid]);
    });

    it('still verifies a token issued before on a route that needs one', async () => {
      expect((await fetch(`${api.url}/v1/gateway/${gateway}/merchant/policies`, bearer(token))).status).to.equal(200);
    });

    it('answers 503 with the reason when it would issue a token, and again while the failure is remembered', async () => {
      for (let i = 0; i < 2; i += 1) {
        const ch = await postJson(`${api.url}/v1/gateway/${gateway}/auth/challenge`, {});
        expect(ch.status).to.equal(200);
        const { nonce } = (await ch.json()) as { nonce: string };
        const signature = await ed.signAsync(new TextEncoder().encode(nonce), owner.secretKey);
        const res = await postJson(`${api.url}/v1/gateway/${gateway}/auth/verify`, { signer: owner.address, signature: Array.from(signature), nonce });
        const message = await expectError(res, 503);
        expect(message).to.equal(`signing keys unavailable: ${reason()}`);
      }
    });

    it('answers degraded on /v1/health, naming the key', async () => {
      const res = await fetch(`${api.url}/v1/health`);
      expect(res.status).to.equal(200);
      const body = ((await res.json()) as { data: { status: string; checks: Record<string, boolean>; reasons: string[] } }).data;
      expect(body.status).to.equal('degraded');
      expect(body.checks).to.deep.include({ postgres: true, redis: true, secrets: false });
      expect(body.reasons).to.include(reason());
      expect(body.reasons).to.include(`webhook secret ${webhookId} cannot be opened: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`);
      expect(body.reasons).to.include(`fee payer key ${feePayer} cannot be opened: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`);
    });

    it('named at start, at error level, every secret it cannot open (never a secret)', () => {
      const errors = logs.lines().filter((l) => l['level'] === 50).map((l) => `${String(l['kind'])}:${String(l['row'])}`);
      expect(errors).to.include.members([`signing key:${kid}`, `webhook secret:${webhookId}`, `fee payer key:${feePayer}`]);
      expect(logs.text()).to.not.match(/aes-256-gcm:v1:/);
    });

    it('starts the webhooks and scheduler roles all the same, each naming the secrets it cannot open', async () => {
      const roleLogs = captureLogs();
      const ctx: AppContext = { ...api.ctx, logger: roleLogs.logger };
      const webhooks = await startWebhooksRole(ctx);
      await webhooks.stop();
      const scheduler = await checkSecretsAtStart(ctx, ROLE_SECRETS.scheduler);
      expect(scheduler.map((u) => `${u.kind}:${u.id}`)).to.deep.equal([`scheduler signer secret:${gateway}`]);
      const errors = roleLogs.lines().filter((l) => l['level'] === 50).map((l) => `${String(l['kind'])}:${String(l['row'])}`);
      expect(errors).to.have.members([`webhook secret:${webhookId}`, `scheduler signer secret:${gateway}`]);
    });
  });

  describe('tributary keys seal (real processes)', function () {
    this.timeout(180_000);
    let env: TestEnv;
    let data: SeededSecrets;

    before(async () => {
      env = await createTestEnv('secrets-seal-cli');
      data = await developmentRun(env);
    });
    after(async () => { await env?.close(); });

    it('refuses with a clear error when no key is configured, and seals nothing', async () => {
      const r = await runCli(['keys', 'seal'], { ...env.env, ...DEV, LOG_LEVEL: 'silent' });
      expect(r.code, r.output).to.not.equal(0);
      expect(r.output).to.match(/keys seal: SIGNING_KEY_ENCRYPTION_KEY is not set/);
      expect(Object.values(await plainCount(env)).every((n) => n === 1)).to.equal(true);
    });

    it('seals every plaintext secret once when two run at the same moment, and prints a summary per kind', async () => {
      const key = randomBytes(32).toString('hex');
      const runs = await Promise.all([0, 1].map(() => runCli(['keys', 'seal'], { ...env.env, ...withKey(key), LOG_LEVEL: 'silent' })));
      const summaries = runs.map((r) => {
        expect(r.code, r.output).to.equal(0);
        return JSON.parse(r.output) as { message: string; kinds: { kind: string; table: string; column: string; sealed: number; plaintextLeft: number }[] };
      });
      for (const s of summaries) {
        expect(s.kinds.map((k) => `${k.table}.${k.column}`)).to.have.members(COLUMNS.map(([t, c]) => `${t}.${c}`));
        expect(s.kinds.every((k) => k.plaintextLeft === 0)).to.equal(true);
      }
      // each row sealed by exactly one of the two
      const total = (kind: string) => summaries.reduce((n, s) => n + s.kinds.find((k) => k.kind === kind)!.sealed, 0);
      for (const kind of ['signing key', 'scheduler signer secret', 'webhook secret', 'webhook previous secret', 'fee payer key']) expect(total(kind), kind).to.equal(1);
      expect(Object.values(await plainCount(env)).every((n) => n === 0)).to.equal(true);
      // and they open under the key: the node starts healthy, publishes the key and verifies the old token
      const api = await startApi(env, withKey(key));
      try {
        const health = ((await (await fetch(`${api.url}/v1/health`)).json()) as { data: { status: string } }).data;
        expect(health.status).to.equal('ok');
        expect((await fetch(`${api.url}/v1/gateway/${data.gateway}/merchant/policies`, bearer(data.token))).status).to.equal(200);
        expect((await signIn(api.url, data.gateway, data.owner)).token).to.be.a('string');
      } finally {
        await api.close();
      }
    });
  });
});
