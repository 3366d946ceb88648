/** Shared auth helpers and key material: pure functions, no services. */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { adminKeyMatches, checkAdminKey } from '../../src/kernel/auth/admin-key.js';
import { parseBearer } from '../../src/kernel/auth/bearer.js';
import { AppError } from '../../src/kernel/http/errors.js';
import { generateSigningKey, KeyMaterialError, newKid, openPrivateJwk, sealPrivateJwk } from '../../infra/signing-keys/crypto.js';

const statusOf = (f: () => unknown): number | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return err instanceof AppError ? err.status : -1;
  }
};

describe('auth helpers', () => {
  describe('parseBearer', () => {
    it('returns the token of a Bearer header, any case of the scheme', () => {
      expect(parseBearer('Bearer abc.def-ghi_jkl')).to.equal('abc.def-ghi_jkl');
      expect(parseBearer('bearer a.b.c')).to.equal('a.b.c');
    });
    it('returns undefined without a header and 401 for another scheme or an empty token', () => {
      expect(parseBearer(undefined)).to.equal(undefined);
      expect(statusOf(() => parseBearer('Basic dXNlcjpwYXNz'))).to.equal(401);
      expect(statusOf(() => parseBearer('Bearer '))).to.equal(401);
      expect(statusOf(() => parseBearer('Bearer a b'))).to.equal(401);
    });
  });

  describe('admin key', () => {
    it('matches only the exact key, whatever the lengths', () => {
      expect(adminKeyMatches('s3cret', 's3cret')).to.equal(true);
      expect(adminKeyMatches('s3cret', 's3cre')).to.equal(false);
      expect(adminKeyMatches('s3cret', 's3cret-and-more')).to.equal(false);
      expect(adminKeyMatches('s3cret', undefined)).to.equal(false);
    });
    it('is 403 when no key is configured, 401 when missing or wrong', () => {
      expect(statusOf(() => checkAdminKey(undefined, 'anything'))).to.equal(403);
      expect(statusOf(() => checkAdminKey('k', undefined))).to.equal(401);
      expect(statusOf(() => checkAdminKey('k', 'x'))).to.equal(401);
      expect(statusOf(() => checkAdminKey('k', 'k'))).to.equal(undefined);
    });
  });

  describe('signing key material', () => {
    it('names keys by UTC day and 4 hex characters', () => {
      expect(newKid(Date.UTC(2026, 10, 21, 23, 59))).to.match(/^2026-11-21-[0-9a-f]{4}$/);
    });
    it('seals private keys with AES-256-GCM and opens them only with the key, for the same kid', async () => {
      const key = randomBytes(32);
      const { privateJwk, publicJwk } = await generateSigningKey('2026-01-01-abcd');
      expect(publicJwk).to.include({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: '2026-01-01-abcd' });
      expect(publicJwk).to.not.have.property('d');
      const sealed = sealPrivateJwk(privateJwk, '2026-01-01-abcd', key);
      expect(sealed.startsWith('aes-256-gcm:v1:')).to.equal(true);
      expect(sealed).to.not.contain(String(privateJwk.d));
      expect(openPrivateJwk(sealed, '2026-01-01-abcd', key).d).to.equal(privateJwk.d);
      expect(() => openPrivateJwk(sealed, '2026-01-01-abcd', randomBytes(32))).to.throw(KeyMaterialError);
      expect(() => openPrivateJwk(sealed, '2026-01-02-abcd', key)).to.throw(KeyMaterialError);
      expect(() => openPrivateJwk(sealed, '2026-01-01-abcd', undefined)).to.throw(KeyMaterialError, /SIGNING_KEY_ENCRYPTION_KEY/);
    });
    it('stores in the clear only without a key (development mode)', async () => {
      const { privateJwk } = await generateSigningKey('k');
      const sealed = sealPrivateJwk(privateJwk, 'k', undefined);
      expect(sealed.startsWith('plain:')).to.equal(true);
      expect(openPrivateJwk(sealed, 'k', undefined).d).to.equal(privateJwk.d);
    });
  });
});
