/**
 * Key material: ES256 key pairs (jose), readable key ids, and the at-rest encoding of
 * private keys: AES-256-GCM under SIGNING_KEY_ENCRYPTION_KEY, the kid as associated data
 * so a ciphertext copied onto another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

export const SIGNING_ALG = 'ES256';

/** The members a published JWK carries (SPEC.md, JWKS). */
export interface PublicJwk { kid: string; kty: string; alg: string; use: string; crv: string; x: string; y: string }

export class KeyMaterialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyMaterialError';
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

const GCM = 'aes-256-gcm:v1';
const PLAIN = 'plain';

/** Encodes a private JWK for storage; without a key (development mode) it is stored in the clear. */
export function sealPrivateJwk(jwk: JWK, kid: string, encryptionKey: Buffer | undefined): string {
  const clear = Buffer.from(JSON.stringify(jwk), 'utf8');
  if (!encryptionKey) return `${PLAIN}:${clear.toString('base64url')}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const ct = Buffer.concat([cipher.update(clear), cipher.final()]);
  return [GCM, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
}

/** Decodes a stored private JWK; throws KeyMaterialError when it cannot (no key, wrong key, tampered). */
export function openPrivateJwk(sealed: string, kid: string, encryptionKey: Buffer | undefined): JWK {
  if (sealed.startsWith(`${PLAIN}:`)) return JSON.parse(Buffer.from(sealed.slice(PLAIN.length + 1), 'base64url').toString('utf8')) as JWK;
  if (!sealed.startsWith(`${GCM}:`)) throw new KeyMaterialError(`signing key ${kid}: unknown storage format`);
  if (!encryptionKey) throw new KeyMaterialError(`signing key ${kid} is encrypted and SIGNING_KEY_ENCRYPTION_KEY is not set`);
  const [iv, tag, ct] = sealed.slice(GCM.length + 1).split(':');
  if (iv === undefined || tag === undefined || ct === undefined) throw new KeyMaterialError(`signing key ${kid}: malformed ciphertext`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', encryptionKey, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(kid, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const clear = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
    return JSON.parse(clear.toString('utf8')) as JWK;
  } catch {
    throw new KeyMaterialError(`signing key ${kid} does not decrypt: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`);
  }
}
