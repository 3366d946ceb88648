/**
 * Strict ed25519 verification: every wallet signature the service accepts (gateway
 * sign-in, wallet proofs for tokens, x402 payment proofs) goes through here.
 *
 * Verification is Node's (OpenSSL), which follows RFC 8032: S must be below the group
 * order and R is compared by its encoding, so no malleable or non-canonical signature
 * passes. Before that the public key itself is judged: it must be a canonical encoding of
 * a curve point and not of small order. A small-order key (the all-zero key is one: a
 * cleared or default field) has no secret key behind it, and under cofactored rules
 * (ZIP-215, noble's default) the signature R = identity, S = 0 verifies for every
 * message; under OpenSSL's rules it still does for a quarter of them. noble decodes the
 * point only; it never decides whether a signature is valid.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { Point } from '@noble/ed25519';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Why a 32-byte public key cannot sign anything, or undefined when it can. */
export function weakPublicKey(publicKey: Uint8Array): string | undefined {
  if (publicKey.length !== 32) return 'not a 32-byte ed25519 public key';
  let point: Point;
  try {
    point = Point.fromBytes(publicKey, false); // strict: a non-canonical encoding is refused
  } catch {
    return 'not a point of the ed25519 curve';
  }
  if (point.isSmallOrder()) return 'a small-order ed25519 public key, which has no secret key';
  return undefined;
}

function keyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
}

/** True only for a valid RFC 8032 signature of `message` by a key that is not weak. */
export function verifyStrict(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || weakPublicKey(publicKey) !== undefined) return false;
  try {
    return verify(null, message, keyObject(publicKey), signature);
  } catch {
    return false; // an encoding OpenSSL refuses is simply not a valid signature
  }
}

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The ed25519 signature of `message` by a Solana secret key (64 bytes: seed then public key). */
export function signDetached(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  if (secretKey.length !== 64 && secretKey.length !== 32) throw new Error('an ed25519 secret key is 64 bytes (or a 32-byte seed)');
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
  return new Uint8Array(sign(null, message, key));
}
