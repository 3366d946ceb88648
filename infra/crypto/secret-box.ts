/**
 * Secrets at rest (JWT signing keys, scheduler signer secrets, webhook signing secrets,
 * exact fee payer keys): AES-256-GCM under
 * SIGNING_KEY_ENCRYPTION_KEY, stored as `aes-256-gcm:v1:<iv>:<tag>:<ciphertext>`. The
 * associated data names the row (a kid, a webhook), so a ciphertext copied onto another
 * row does not decrypt. Without a key (development mode, refused otherwise at start by
 * the key ring) the secret is stored in the clear, marked `plain:`; once a key is set,
 * such secrets are sealed at start and by `tributary keys seal` (infra/secrets).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const GCM = 'aes-256-gcm:v1';
const PLAIN = 'plain';

/** How a secret kept in the clear begins (a SQL LIKE pattern finds them: `plain:%`). */
export const PLAIN_PREFIX = `${PLAIN}:`;

export const isPlainSecret = (stored: string): boolean => stored.startsWith(PLAIN_PREFIX);

export class SecretBoxError extends Error {
  /** why, without naming the row: what an operator reads in a log line or /v1/health */
  readonly reason: string;
  constructor(aad: string, reason: string, message = `${aad}: ${reason}`) {
    super(message);
    this.name = 'SecretBoxError';
    this.reason = reason;
  }
}

export function sealSecret(secret: string, aad: string, key: Buffer | undefined): string {
  const clear = Buffer.from(secret, 'utf8');
  if (!key) return `${PLAIN}:${clear.toString('base64url')}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(clear), cipher.final()]);
  return [GCM, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
}

/** Throws SecretBoxError when the secret cannot be opened (no key, wrong key, tampered). */
export function openSecret(sealed: string, aad: string, key: Buffer | undefined): string {
  if (sealed.startsWith(`${PLAIN}:`)) return Buffer.from(sealed.slice(PLAIN.length + 1), 'base64url').toString('utf8');
  if (!sealed.startsWith(`${GCM}:`)) throw new SecretBoxError(aad, 'unknown secret storage format');
  if (!key) throw new SecretBoxError(aad, 'secret is encrypted and SIGNING_KEY_ENCRYPTION_KEY is not set');
  const [iv, tag, ct] = sealed.slice(GCM.length + 1).split(':');
  if (iv === undefined || tag === undefined || ct === undefined) throw new SecretBoxError(aad, 'malformed secret ciphertext');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    const reason = 'wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row';
    throw new SecretBoxError(aad, reason, `${aad}: secret does not decrypt (${reason})`);
  }
}

/** A `plain:` secret sealed under `key` for the same row; undefined when `stored` is not plain. */
export function sealPlainSecret(stored: string, aad: string, key: Buffer): string | undefined {
  if (!isPlainSecret(stored)) return undefined;
  return sealSecret(openSecret(stored, aad, undefined), aad, key);
}
