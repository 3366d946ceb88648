/**
 * The key ring opens the active private key only to sign (issue 41, finding 2). Under a
 * key that does not open it, publishing and verifying go on; sign() answers 503 with the
 * reason, logged once however often it is asked; a key that opens (a rotation by a node
 * holding the right key) is used as soon as the ring sees it.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { AppError } from '../../src/kernel/http/errors.js';
import { createKeyRing, KEY_CACHE_TTL_MS, type KeyRing } from '../../infra/signing-keys/key-ring.js';
import { ensureActiveKey, rotateSigningKey } from '../../infra/signing-keys/store.js';
import { movableClock } from './auth-fixtures.js';

describe('signing keys: the private key opened only to sign', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let ring: KeyRing;
  let issuer: KeyRing;
  const clock = movableClock();
  const lines: string[] = [];
  const ringKey = randomBytes(32);
  const otherKey = randomBytes(32);

  before(async () => {
    env = await createTestEnv('keys-lazy-open');
    const settings = (key: Buffer) => loadConfig({ ...env.env, TRIBUTARY_DEV_MODE: 'false', SIGNING_KEY_ENCRYPTION_KEY: key.toString('hex') });
    // the active key sealed under another key than this ring's
    await ensureActiveKey(env.db, { nowMs: clock.now(), encryptionKey: otherKey });
    const sink = new Writable({ write(c: Buffer, _e, done) { lines.push(c.toString()); done(); } });
    ring = createKeyRing({ config: settings(ringKey), db: env.db, redis: env.redis, logger: pino({ level: 'info' }, sink), clock });
    issuer = createKeyRing({ config: settings(otherKey), db: env.db, redis: env.redis, logger: pino({ level: 'silent' }), clock });
  });
  after(async () => {
    await ring?.close();
    await issuer?.close();
    await env?.close();
  });

  it('publishes and verifies without opening the private key', async () => {
    const { keys } = await ring.jwks();
    expect(keys).to.have.length(1);
    const { token } = await issuer.sign({ role: 'x' }, { subject: 'someone', expiresAt: Math.floor(clock.now() / 1000) + 60 });
    expect((await ring.verify(token)).sub).to.equal('someone');
  });

  it('answers 503 with the reason to sign(), logged once for repeated attempts', async () => {
    const kid = (await ring.jwks()).keys[0]!.kid;
    const reason = `signing key ${kid} cannot be opened: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`;
    for (let i = 0; i < 3; i += 1) {
      const err = await ring.sign({}, { subject: 's', expiresAt: Math.floor(clock.now() / 1000) + 60 }).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).kind).to.equal('upstream_unavailable');
      expect((err as AppError).message).to.equal(`signing keys unavailable: ${reason}`);
      clock.advance(10); // past the retry delay: tried again, not logged again
    }
    expect(await ring.signingKeyStatus()).to.deep.equal({ kid, ok: false, reason });
    const logged = lines.filter((l) => l.includes('the active signing key cannot be opened'));
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include(reason);
  });

  it('signs as soon as the active key is one it can open', async () => {
    await rotateSigningKey(env.db, { nowMs: clock.now(), encryptionKey: ringKey, graceSeconds: 600 });
    clock.advance(KEY_CACHE_TTL_MS / 1000 + 1);
    const signed = await ring.sign({}, { subject: 's', expiresAt: Math.floor(clock.now() / 1000) + 60 });
    expect((await ring.verify(signed.token)).sub).to.equal('s');
    expect((await ring.signingKeyStatus()).ok).to.equal(true);
  });
});
