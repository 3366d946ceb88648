/**
 * A JWT naming a kid this node has not seen makes it reload the key set (the kid may be a
 * rotation on another node a moment ago). The header is read before any signature check,
 * so anyone could send tokens with made-up kids: each forced a reload from Postgres and
 * the unsealing of the active key, a database round trip per request on every bearer
 * path for free. Forced reloads are now at most one per UNKNOWN_KID_RELOAD_MS, and a key
 * rotated on another node is still found.
 *
 * A token's nbf was its iat: a node a few hundred milliseconds behind the issuing one
 * (whole seconds compared) refused a token just issued, so a payer who paid on one node
 * was answered 402 by the next. nbf now lies NOT_BEFORE_SKEW_SECONDS before iat.
 */
import { expect } from 'chai';
import type { KyselyPlugin } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { createLogger } from '../../infra/log/logger.js';
import { createKeyRing, UNKNOWN_KID_RELOAD_MS, type KeyRing } from '../../infra/signing-keys/key-ring.js';
import { movableClock } from './auth-fixtures.js';

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const forged = (kid: string): string => `${b64({ alg: 'ES256', kid, typ: 'JWT' })}.${b64({ sub: 'x' })}.${Buffer.alloc(64).toString('base64url')}`;

describe('signing keys: unknown kids and clock skew between nodes', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let ring: KeyRing;
  let other: KeyRing;
  let keyQueries = 0;
  const clock = movableClock();

  before(async () => {
    env = await createTestEnv('keys-unknown-kid');
    const config = loadConfig({ ...env.env, TRIBUTARY_DEV_MODE: 'true' });
    const counter: KyselyPlugin = {
      transformQuery(args) {
        if (JSON.stringify(args.node).includes('signing_keys')) keyQueries += 1;
        return args.node;
      },
      async transformResult(args) { return args.result; },
    };
    const logger = createLogger('silent', 'test');
    ring = createKeyRing({ config, db: env.db.withPlugin(counter), redis: env.redis, logger, clock });
    // another node: it rotates, and this node hears nothing of it (no pub/sub message arrives in time)
    other = createKeyRing({ config: { ...config, redis: { ...config.redis, prefix: `${config.redis.prefix}other:` } }, db: env.db, redis: env.redis, logger, clock });
    await ring.warmUp();
  });
  after(async () => {
    await ring?.close();
    await other?.close();
    await env?.close();
  });

  it('reloads the key set at most once per interval however many unknown kids arrive', async () => {
    await ring.jwks();
    const before = keyQueries;
    for (let i = 0; i < 200; i += 1) {
      let refused = false;
      try { await ring.verify(forged(`made-up-${i}`)); } catch { refused = true; }
      expect(refused).to.equal(true);
    }
    expect(keyQueries - before, 'key-set reloads for 200 made-up kids').to.be.at.most(1);
  });

  it('verifies a token issued a moment ago by a node whose clock is 300 ms ahead', async () => {
    const at = Math.floor(clock.now() / 1000) * 1000 + 100; // x.100 s on the issuing node, (x-1).800 s on this one
    const ahead = createKeyRing({ config: loadConfig({ ...env.env, TRIBUTARY_DEV_MODE: 'true' }), db: env.db, redis: env.redis, logger: createLogger('silent', 'test'), clock: { now: () => at } });
    const behind = createKeyRing({ config: loadConfig({ ...env.env, TRIBUTARY_DEV_MODE: 'true' }), db: env.db, redis: env.redis, logger: createLogger('silent', 'test'), clock: { now: () => at - 300 } });
    try {
      const { token } = await ahead.sign({ role: 'x' }, { subject: 'payer', expiresAt: Math.floor(at / 1000) + 60 });
      expect((await behind.verify(token)).sub).to.equal('payer');
    } finally {
      await ahead.close();
      await behind.close();
    }
  });

  it('still verifies a token of a key rotated on another node a moment ago', async () => {
    clock.advance(UNKNOWN_KID_RELOAD_MS / 1000 + 1);
    await other.rotate();
    const { token } = await other.sign({ role: 'x' }, { subject: 'someone', expiresAt: Math.floor(clock.now() / 1000) + 60 });
    const payload = await ring.verify(token);
    expect(payload.sub).to.equal('someone');
  });
});
