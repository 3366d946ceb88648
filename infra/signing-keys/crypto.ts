/**
 * Key material: ES256 key pairs (jose), readable key ids, and the at-rest encoding of
 * private keys: AES-256-GCM under SIGNING_KEY_ENCRYPTION_KEY, the kid as associated data
 * so a ciphertext copied onto another row does not decrypt.
 */
import { randomBytes } from 'node:crypto';
import { openSecret, sealSecret, SecretBoxError } from '../crypto/secret-box.js';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

export const SIGNING_ALG = 'ES256';

/** The members a published JWK carries (SPEC.md, JWKS). */
export interface PublicJwk { kid: string; kty: string; alg: string; use: string; crv: string; x: string; y: string }

export class KeyMaterialError extends Error {
  /** why, without the kid: `wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`, say */
  readonly reason: string;
  constructor(kid: string, reason: string) {
    super(`signing key ${kid}: ${reason}`);
    this.name = 'KeyMaterialError';
    this.reason = reason;
  }
}

/** `2026-11-21-ab12`: the UTC day of creation, then 4 random hex characters. */
export function newKid(nowMs: number): string {
  return `${new Date(nowMs).toISOString().slice(0, 10)}-${randomBytes(2).toString('hex')}`;
}

export async function generateSigningKey(kid: string): Promise<{ publicJwk: PublicJwk; privateJwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const pub = await exportJWK(publicKey);
  const priv = await exportJWK(privateKey);
  const publicJwk: PublicJwk = {
    kid, kty: String(pub.kty), alg: SIGNING_ALG, use: 'sig', crv: String(pub.crv), x: String(pub.x), y: String(pub.y),
  };
  return { publicJwk, privateJwk: { ...priv, kid, alg: SIGNING_ALG, use: 'sig' } };
}

/** Encodes a private JWK for storage; without a key (development mode) it is stored in the clear. */
export function sealPrivateJwk(jwk: JWK, kid: string, encryptionKey: Buffer | undefined): string {
  return sealSecret(JSON.stringify(jwk), kid, encryptionKey);
}

/** Decodes a stored private JWK; throws KeyMaterialError when it cannot (no key, wrong key, tampered). */
export function openPrivateJwk(sealed: string, kid: string, encryptionKey: Buffer | undefined): JWK {
  try {
    return JSON.parse(openSecret(sealed, kid, encryptionKey)) as JWK;
  } catch (err) {
    throw new KeyMaterialError(kid, err instanceof SecretBoxError ? err.reason : 'the stored private key is not JSON');
  }
}
