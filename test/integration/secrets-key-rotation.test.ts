/**
 * Rotating SIGNING_KEY_ENCRYPTION_KEY: a secret of every kind (the JWT signing key, a
 * webhook's current and previous secret, a scheduler signer, an exact fee payer) sealed
 * under key A; then the new key B set, A moved to SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS.
 *
 * - Before anything is re-sealed, every reader configured with B and A opens them.
 * - A node started with B and A re-seals each row once, logging it: afterwards each opens
 *   under B alone, with the same value; tokens issued before verify and new ones issue.
 * - A row under a key nobody holds (C) is left as it is and reported: health degraded.
 * - `tributary keys seal` twice at once: every row re-sealed by exactly one of them.
 * - A row changed between the re-sealing's read and its update (a webhook secret rotated
 *   by a node still on A) is not overwritten; health counts it under a previous key, not
 *   as degraded, until it is re-sealed.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import type { TestApi } from '../support/app.js';
import { runCli, waitFor } from '../support/process.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { SECRET_COLUMNS, sealSecrets, type SealSummary } from '../../src/app/secrets.js';
import { openSecret, sealSecret, SecretBoxError } from '../../infra/crypto/secret-box.js';
import { withPreviousKeys } from '../../src/kernel/config/secret-key.js';
import { resealColumn, surveyColumn } from '../../infra/secrets/columns.js';
import { createKeyRing } from '../../infra/signing-keys/key-ring.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';
import { WEBHOOK_SECRETS } from '../../commands/webhooks/store.js';
import { newSigningSecret, signedHeaders, signWithKeys } from '../../commands/webhooks/delivery/signer.js';
import { createSecretKeys } from '../../commands/webhooks/delivery/secret-keys.js';
import { activeSigners } from '../../commands/scheduler/signers.js';
import { loadFeePayers } from '../../commands/x402/exact/fee-payers.js';
import { movableClock, signIn } from './auth-fixtures.js';
import { bearer, captureLogs, NETWORK, seedSecrets, startApi, withKey, type SeededSecrets } from './secrets-fixtures.js';

const hexKey = () => randomBytes(32).toString('hex');
const buf = (hex: string) => Buffer.from(hex, 'hex');

/** Every sealed value of the service, by `kind:row`, as it is stored. */
async function storedSecrets(env: TestEnv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const col of SECRET_COLUMNS) {
    const { rows } = await sql<{ id: string; stored: string }>`
      SELECT ${sql.ref(col.id)}::text AS id, ${sql.ref(col.column)} AS stored FROM ${sql.table(col.table)} WHERE ${sql.ref(col.column)} IS NOT NULL`.execute(env.db);
    for (const r of rows) out.set(`${col.kind}:${r.id}`, r.stored);
  }
  return out;
}

/** Every secret opened under `key`, by `kind:row`; `!` and the reason for one that does not open. */
async function openedSecrets(env: TestEnv, key: Buffer): Promise<Map<string, string>> {
  const stored = await storedSecrets(env);
  const out = new Map<string, string>();
  for (const col of SECRET_COLUMNS) {
    for (const [name, value] of stored) {
      if (!name.startsWith(`${col.kind}:`)) continue;
      try {
        out.set(name, openSecret(value, col.aad(name.slice(col.kind.length + 1)), key));
      } catch (err) {
        out.set(name, `!${(err as SecretBoxError).reason}`);
      }
    }
  }
  return out;
}

/** A webhook whose secret is sealed under a key this deployment never had. */
async function strangerWebhook(env: TestEnv, owner: string): Promise<string> {
  const now = new Date();
  const row = await env.db.insertInto('webhooks').values({
    gateway_pubkey: owner, gateway_account: owner, endpoint_url: 'https://8.8.8.8/stranger', active: true, secret: 'pending', created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  await env.db.updateTable('webhooks').set({ secret: sealSecret(newSigningSecret(), secretAad(row.id), randomBytes(32)) }).where('id', '=', row.id).execute();
  return `webhook secret:${row.id}`;
}

/** The rows seeded under A, by `kind:row`. */
const seededRows = (d: SeededSecrets): string[] => [
  `signing key:${d.kid}`, `scheduler signer secret:${d.gateway}`, `webhook secret:${d.webhookId}`,
  `webhook previous secret:${d.webhookId}`, `fee payer key:${d.feePayer}`,
];

interface Health { status: string; checks: Record<string, boolean>; reasons: string[]; secretsUnderPreviousKey?: number }
const health = async (api: TestApi): Promise<Health> => ((await (await fetch(`${api.url}/v1/health`)).json()) as { data: Health }).data;

describe('rotating SIGNING_KEY_ENCRYPTION_KEY: secrets under a previous key open, and are re-sealed under the new one', function () {
  this.timeout(120_000);

  describe('a node started with the new key and the old one as previous', () => {
    let env: TestEnv;
    let data: SeededSecrets;
    let api: TestApi | undefined;
    let stranger: string;
    let underA: Map<string, string>;
    let stored0: Map<string, string>;
    const A = hexKey();
    const B = hexKey();
    const logs = captureLogs();

    before(async () => {
      env = await createTestEnv('secrets-rotation');
      data = await seedSecrets(env, A);
      stranger = await strangerWebhook(env, data.owner.address);
      underA = await openedSecrets(env, buf(A));
      stored0 = await storedSecrets(env);
    });
    after(async () => {
      await api?.close();
      await env?.close();
    });

    it('lets every reader open the secrets still under the previous key, which the new key alone does not', async () => {
      const rotated = withPreviousKeys(buf(B), [buf(A)]);
      const config = loadConfig({ ...env.env, ...withKey(B, [A]) });
      const ring = createKeyRing({ config, db: env.db, redis: env.redis, logger: pino({ level: 'silent' }), clock: movableClock() });
      try {
        const signed = await ring.sign({}, { subject: 's', expiresAt: Math.floor(Date.now() / 1000) + 60 });
        expect(signed.kid).to.equal(data.kid);
        expect((await ring.verify(signed.token)).sub).to.equal('s');
      } finally {
        await ring.close();
      }
      expect((await activeSigners(env.db, rotated)).get(data.gateway)).to.not.equal(undefined);
      expect((await loadFeePayers(env.db, NETWORK, Date.now(), rotated)).map((p) => p.address)).to.deep.equal([data.feePayer]);
      const row = await env.db.selectFrom('webhooks').select(['id as webhook_id', 'secret', 'previous_secret', 'previous_secret_until'])
        .where('id', '=', data.webhookId).executeTakeFirstOrThrow();
      const now = Date.now();
      expect(signWithKeys(createSecretKeys(rotated, () => now)(row), 'msg_1', now, '{}')).to.deep.equal(signedHeaders([data.secret, data.previous], 'msg_1', now, '{}'));
      // nothing was re-sealed by reading
      expect(await storedSecrets(env)).to.deep.equal(stored0);
      const underB = await openedSecrets(env, buf(B));
      for (const name of seededRows(data)) expect(underB.get(name), name).to.equal('!wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row');
    });

    it('re-seals every row at start so each opens under the new key alone, with the same value', async () => {
      api = await startApi(env, withKey(B, [A]), logs.logger);
      const underB = await openedSecrets(env, buf(B));
      for (const name of seededRows(data)) {
        expect(underB.get(name), name).to.equal(underA.get(name));
        expect(underB.get(name), name).to.not.match(/^!/);
      }
      const after = await storedSecrets(env);
      for (const name of seededRows(data)) expect(after.get(name), name).to.match(/^aes-256-gcm:v1:/).and.not.equal(stored0.get(name));
    });

    it('leaves the row under a key nobody holds as it was', async () => {
      expect((await storedSecrets(env)).get(stranger)).to.equal(stored0.get(stranger));
      expect((await openedSecrets(env, buf(B))).get(stranger)).to.equal('!wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row');
    });

    it('logs each re-sealing by kind and row, never the secret', () => {
      const resealed = logs.lines().filter((l) => l['msg'] === 'secret re-sealed from a previous key under SIGNING_KEY_ENCRYPTION_KEY');
      expect(resealed.map((l) => `${String(l['kind'])}:${String(l['row'])}`)).to.have.members(seededRows(data));
      const text = logs.text();
      for (const secret of [data.secret, data.previous, A, B]) expect(text).to.not.include(secret);
      expect(text).to.not.match(/"d":"|aes-256-gcm:v1:/);
      const done = logs.lines().find((l) => String(l['msg']).startsWith('every secret opens under SIGNING_KEY_ENCRYPTION_KEY'));
      expect(done, 'says the previous key may go').to.not.equal(undefined);
    });

    it('verifies a token issued under the old key, publishes the same key, and issues new tokens', async () => {
      const jwks = (await (await fetch(`${api!.url}/v1/jwks`)).json()) as { keys: { kid: string }[] };
      expect(jwks.keys.map((k) => k.kid)).to.deep.equal([data.kid]);
      expect((await fetch(`${api!.url}/v1/gateway/${data.gateway}/merchant/policies`, bearer(data.token))).status).to.equal(200);
      const fresh = await signIn(api!.url, data.gateway, data.owner);
      expect((await fetch(`${api!.url}/v1/gateway/${data.gateway}/merchant/policies`, bearer(fresh.token))).status).to.equal(200);
    });

    it('answers degraded on /v1/health for the row no key opens, and counts none under the previous key', async () => {
      const body = await health(api!);
      expect(body.status).to.equal('degraded');
      expect(body.reasons).to.deep.equal([`${stranger.replace(':', ' ')} cannot be opened: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`]);
      expect(body.secretsUnderPreviousKey).to.equal(0);
    });
  });

  describe('tributary keys seal, twice at the same moment (real processes)', function () {
    this.timeout(180_000);
    let env: TestEnv;
    let data: SeededSecrets;
    const A = hexKey();
    const B = hexKey();

    before(async () => {
      env = await createTestEnv('secrets-rotation-cli');
      data = await seedSecrets(env, A);
    });
    after(async () => { await env?.close(); });

    it('re-seals every row exactly once, each then opening under the new key alone, and says what is left per kind', async () => {
      const stranger = await strangerWebhook(env, data.owner.address);
      const underA = await openedSecrets(env, buf(A));
      const strangerBefore = (await storedSecrets(env)).get(stranger);
      const runs = await Promise.all([0, 1].map(() => runCli(['keys', 'seal'], { ...env.env, ...withKey(B, [A]), LOG_LEVEL: 'silent' })));
      const summaries = runs.map((r) => {
        expect(r.code, r.output).to.equal(0);
        return JSON.parse(r.output) as { message: string; kinds: SealSummary[] };
      });
      const total = (kind: string) => summaries.reduce((n, s) => n + s.kinds.find((k) => k.kind === kind)!.resealed, 0);
      for (const kind of ['signing key', 'scheduler signer secret', 'webhook secret', 'webhook previous secret', 'fee payer key']) expect(total(kind), kind).to.equal(1);
      for (const s of summaries) {
        for (const k of s.kinds) {
          expect(k.sealed, k.kind).to.equal(0);
          expect(k.underPreviousKey, k.kind).to.equal(0);
          expect(k.unopened, k.kind).to.equal(k.kind === 'webhook secret' ? 1 : 0);
        }
        expect(s.message).to.match(/, 0 still under a previous key, 1 in use and 0 no longer in use open under no key$/);
      }
      const underB = await openedSecrets(env, buf(B));
      for (const name of seededRows(data)) expect(underB.get(name), name).to.equal(underA.get(name));
      expect((await storedSecrets(env)).get(stranger)).to.equal(strangerBefore);
    });
  });

  describe('a row changed while it is re-sealed', () => {
    let env: TestEnv;
    let data: SeededSecrets;
    let api: TestApi | undefined;
    const A = hexKey();
    const B = hexKey();
    const rotated = withPreviousKeys(buf(B), [buf(A)]);
    const clock = movableClock();

    before(async () => {
      env = await createTestEnv('secrets-rotation-race');
      data = await seedSecrets(env, A);
    });
    after(async () => {
      await api?.close();
      await env?.close();
    });

    /** A node still on A rotates the webhook's secret: the new one sealed under A. */
    const rotateUnderA = async (db: typeof env.db): Promise<{ secret: string; stored: string }> => {
      const secret = newSigningSecret();
      const stored = sealSecret(secret, secretAad(data.webhookId), buf(A));
      await db.updateTable('webhooks').set({ secret: stored }).where('id', '=', data.webhookId).execute();
      return { secret, stored };
    };

    it('is not overwritten: the re-sealing that read the old value leaves the new one, still under the previous key', async () => {
      let written: { secret: string; stored: string } | undefined;
      let resealing: ReturnType<typeof resealColumn> | undefined;
      await env.db.transaction().execute(async (trx) => {
        written = await rotateUnderA(trx);
        // the re-sealing reads the committed (old) value, and its UPDATE waits for this transaction
        resealing = resealColumn(env.db, WEBHOOK_SECRETS, rotated);
        await waitFor(async () => {
          const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(env.db);
          return Number(rows[0]!.n) > 0;
        }, 10_000, 'the re-sealing to wait on the row');
      });
      expect(await resealing).to.deep.equal({ sealed: [], resealed: [] });
      const row = await env.db.selectFrom('webhooks').select('secret').where('id', '=', data.webhookId).executeTakeFirstOrThrow();
      expect(row.secret).to.equal(written!.stored);
      expect(openSecret(row.secret, secretAad(data.webhookId), buf(A))).to.equal(written!.secret);
      const survey = await surveyColumn(env.db, WEBHOOK_SECRETS, rotated, Date.now(), 'all');
      expect(survey).to.deep.equal({ underPreviousKey: [String(data.webhookId)], unopened: [], unopenedNotInUse: 0 });
      // the next re-sealing takes it, with the value written last
      expect((await resealColumn(env.db, WEBHOOK_SECRETS, rotated)).resealed).to.deep.equal([String(data.webhookId)]);
      const after = await env.db.selectFrom('webhooks').select('secret').where('id', '=', data.webhookId).executeTakeFirstOrThrow();
      expect(openSecret(after.secret, secretAad(data.webhookId), buf(B))).to.equal(written!.secret);
    });

    it('counts on /v1/health a secret sealed under the previous key after start, not as degraded, until it is re-sealed', async () => {
      api = await startApi(env, withKey(B, [A]), captureLogs().logger, clock);
      let body = await health(api);
      expect(body.status).to.equal('ok');
      expect(body.secretsUnderPreviousKey).to.equal(0);
      await rotateUnderA(env.db);
      clock.advance(61);
      body = await waitFor(async () => {
        const b = await health(api!);
        return b.secretsUnderPreviousKey === 1 ? b : undefined;
      }, 10_000, 'health to count the secret under the previous key');
      expect(body.status).to.equal('ok');
      expect(body.checks['secrets']).to.equal(true);
      const kinds = await sealSecrets(api.ctx);
      expect(kinds.find((k) => k.kind === 'webhook secret')).to.include({ resealed: 1, underPreviousKey: 0, unopened: 0 });
      clock.advance(61);
      await waitFor(async () => (await health(api!)).secretsUnderPreviousKey === 0, 10_000, 'health to count none left');
    });
  });
});
