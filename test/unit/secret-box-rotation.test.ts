/**
 * The secret box across a rotation of SIGNING_KEY_ENCRYPTION_KEY: a secret sealed under a
 * key listed in SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS opens, sealing always uses the current
 * key, a row written before rotation existed (`aes-256-gcm:v1:`) opens as it did, and a
 * secret no key opens fails with the same error as before.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { openSecret, resealSecret, sealSecret, SecretBoxError, unsealSecret } from '../../infra/crypto/secret-box.js';
import { hasPreviousKeys, withPreviousKeys } from '../../src/kernel/config/secret-key.js';

const A = Buffer.alloc(32, 0xa1);
const B = Buffer.alloc(32, 0xb2);
const C = Buffer.alloc(32, 0xc3);
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const WRONG = 'wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row';

/** A row as written before rotation existed: sealed under A, the format then and now. */
const sealedUnderA = sealSecret(SECRET, 'webhook:7', A);
/**
 * The same row with one bit of its ciphertext's first byte flipped (changed in the bytes, not
 * the text: a base64url text's last character may differ only in bits no byte holds).
 */
const tampered = (() => {
  const at = sealedUnderA.lastIndexOf(':') + 1;
  const ct = Buffer.from(sealedUnderA.slice(at), 'base64url');
  ct[0] = ct[0]! ^ 0x01;
  return `${sealedUnderA.slice(0, at)}${ct.toString('base64url')}`;
})();

describe('secret box: rotating SIGNING_KEY_ENCRYPTION_KEY', () => {
  it('opens a secret sealed under a previous key, saying so; the current key first', () => {
    const rotated = withPreviousKeys(B, [C, A]);
    expect(sealedUnderA).to.match(/^aes-256-gcm:v1:[^:]+:[^:]+:[^:]+$/);
    expect(openSecret(sealedUnderA, 'webhook:7', rotated)).to.equal(SECRET);
    expect(unsealSecret(sealedUnderA, 'webhook:7', rotated).under).to.equal('previous key');
    expect(unsealSecret(sealSecret(SECRET, 'webhook:7', B), 'webhook:7', rotated)).to.deep.equal({ secret: SECRET, under: 'current key' });
    expect(unsealSecret(sealSecret(SECRET, 'webhook:7', undefined), 'webhook:7', rotated)).to.deep.equal({ secret: SECRET, under: 'plaintext' });
  });

  it('seals under the current key only: what it seals opens under the current key alone', () => {
    const rotated = withPreviousKeys(B, [A]);
    const sealed = sealSecret(SECRET, 'webhook:7', rotated);
    expect(openSecret(sealed, 'webhook:7', B)).to.equal(SECRET);
    expect(() => openSecret(sealed, 'webhook:7', A)).to.throw(SecretBoxError, WRONG);
  });

  it('re-seals a secret under a previous key or in plaintext for the current key, and leaves one under the current key', () => {
    const rotated = withPreviousKeys(B, [A]);
    const fromA = resealSecret(sealedUnderA, 'webhook:7', rotated);
    expect(fromA?.from).to.equal('previous key');
    expect(openSecret(fromA!.stored, 'webhook:7', B)).to.equal(SECRET);
    const fromPlain = resealSecret(sealSecret(SECRET, 'webhook:7', undefined), 'webhook:7', rotated);
    expect(fromPlain?.from).to.equal('plaintext');
    expect(openSecret(fromPlain!.stored, 'webhook:7', B)).to.equal(SECRET);
    expect(resealSecret(fromA!.stored, 'webhook:7', rotated)).to.equal(undefined);
  });

  it('fails with the same clear error when no key opens it: an unknown key, another row, a tampered tag', () => {
    const rotated = withPreviousKeys(B, [A]);
    const underC = sealSecret(SECRET, 'webhook:7', C);
    for (const [sealed, aad] of [[underC, 'webhook:7'], [sealedUnderA, 'webhook:8'], [tampered, 'webhook:7']] as const) {
      for (const key of [rotated, B, A]) {
        if (key === A && sealed === sealedUnderA && aad === 'webhook:7') continue;
        let caught: unknown;
        try { openSecret(sealed, aad, key); } catch (err) { caught = err; }
        expect(caught).to.be.instanceOf(SecretBoxError);
        expect((caught as SecretBoxError).reason).to.equal(WRONG);
        expect((caught as SecretBoxError).message).to.equal(`${aad}: secret does not decrypt (${WRONG})`);
      }
    }
    expect(() => resealSecret(underC, 'webhook:7', rotated)).to.throw(SecretBoxError, WRONG);
    expect(() => openSecret(sealedUnderA, 'webhook:7', undefined)).to.throw(SecretBoxError, /SIGNING_KEY_ENCRYPTION_KEY is not set/);
  });

  it('keeps the previous keys out of every dump of the key', () => {
    const rotated = withPreviousKeys(B, [A]);
    expect(hasPreviousKeys(rotated)).to.equal(true);
    expect(hasPreviousKeys(B)).to.equal(false);
    expect(Object.keys(rotated)).to.not.include('previous');
    expect(JSON.stringify(rotated)).to.equal(JSON.stringify(B));
    expect(rotated.equals(B)).to.equal(true);
  });
});
