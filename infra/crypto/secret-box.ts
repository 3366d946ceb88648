/**
 * Secrets at rest (JWT signing keys, scheduler signer secrets, webhook signing secrets,
 * exact fee payer keys): AES-256-GCM under
 * SIGNING_KEY_ENCRYPTION_KEY, stored as `aes-256-gcm:v1:<iv>:<tag>:<ciphertext>`. The
 * associated data names the row (a kid, a webhook), so a ciphertext copied onto another
 * row does not decrypt. Without a key (development mode, refused otherwise at start by
 * the key ring) the secret is stored in the clear, marked `plain:`; once a key is set,
 * such secrets are sealed at start and by `tributary keys seal` (infra/secrets).
 *
 * Rotation: the key may carry earlier keys (SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS). A secret
 * is always sealed under the current key and opened under the first key whose GCM tag
 * checks, current first. The stored form names no key: a row written before rotation
 * existed opens as it did, and a leaked dump does not tell which rows a leaked key opens.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretKey } from '../../src/kernel/config/secret-key.js';

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

/** A secret opened, and what it was kept under. */
export interface Unsealed { secret: string; under: 'plaintext' | 'current key' | 'previous key' }

/** The plaintext, or undefined when the tag does not check under `key` (another key, or a tampered row). */
function decrypt(parts: { iv: Buffer; tag: Buffer; ct: Buffer }, aad: string, key: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, parts.iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(parts.ct), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Opens a stored secret, saying under which key; throws SecretBoxError when no key opens it (no key, wrong keys, tampered). */
export function unsealSecret(sealed: string, aad: string, key: SecretKey | undefined): Unsealed {
  if (sealed.startsWith(`${PLAIN}:`)) return { secret: Buffer.from(sealed.slice(PLAIN.length + 1), 'base64url').toString('utf8'), under: 'plaintext' };
  if (!sealed.startsWith(`${GCM}:`)) throw new SecretBoxError(aad, 'unknown secret storage format');
  if (!key) throw new SecretBoxError(aad, 'secret is encrypted and SIGNING_KEY_ENCRYPTION_KEY is not set');
  const [iv, tag, ct] = sealed.slice(GCM.length + 1).split(':');
  if (iv === undefined || tag === undefined || ct === undefined) throw new SecretBoxError(aad, 'malformed secret ciphertext');
  const parts = { iv: Buffer.from(iv, 'base64url'), tag: Buffer.from(tag, 'base64url'), ct: Buffer.from(ct, 'base64url') };
  const current = decrypt(parts, aad, key);
  if (current !== undefined) return { secret: current, under: 'current key' };
  for (const earlier of key.previous ?? []) {
    const secret = decrypt(parts, aad, earlier);
    if (secret !== undefined) return { secret, under: 'previous key' };
  }
  const reason = 'wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row';
  throw new SecretBoxError(aad, reason, `${aad}: secret does not decrypt (${reason})`);
}

/** Throws SecretBoxError when the secret cannot be opened (no key, wrong key, tampered). */
export function openSecret(sealed: string, aad: string, key: SecretKey | undefined): string {
  return unsealSecret(sealed, aad, key).secret;
}

/** What a stored secret becomes under the current key, and what it was kept under before. */
export interface Resealed { stored: string; from: 'plaintext' | 'previous key' }

/**
 * `stored` sealed under the current key for the same row when it is plaintext or opens
 * only under a previous key; undefined when it is already under the current key. Throws
 * SecretBoxError when no key opens it.
 */
export function resealSecret(stored: string, aad: string, key: SecretKey): Resealed | undefined {
  const opened = unsealSecret(stored, aad, key);
  if (opened.under === 'current key') return undefined;
  return { stored: sealSecret(opened.secret, aad, key), from: opened.under };
}
