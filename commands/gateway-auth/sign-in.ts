/**
 * Gateway sign-in: a challenge nonce, then an ed25519 signature over its UTF-8 bytes by
 * the gateway's authority or its signer, exchanged for a gateway JWT.
 */
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { AppError, forbidden, invalid, notFound } from '../../src/http/errors.js';
import { GATEWAY_ROLE } from '../../src/auth/gateway-token.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { GatewayLookup } from './gateway-lookup.js';
import type { Challenge, NonceStore } from './nonces.js';

export interface SignInDeps {
  lookup: GatewayLookup;
  nonces: NonceStore;
  ring: KeyRing;
  now: () => number;
  tokenTtlSeconds: number;
}

/** A base58 string that decodes to exactly 32 bytes (an ed25519 public key), or a 400. */
export function decodePublicKey(value: string, field: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    throw invalid(`${field} is not base58`);
  }
  if (bytes.length !== 32) throw invalid(`${field} must be a 32-byte public key`);
  return bytes;
}

async function gatewayKeys(deps: SignInDeps, gateway: string) {
  decodePublicKey(gateway, 'gateway');
  const keys = await deps.lookup(gateway);
  if (!keys) throw notFound(`unknown gateway ${gateway}`);
  return keys;
}

export async function createChallenge(deps: SignInDeps, gateway: string): Promise<Challenge> {
  await gatewayKeys(deps, gateway);
  return deps.nonces.issue(gateway, deps.now());
}

async function signatureValid(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean> {
  try {
    return await ed.verifyAsync(signature, message, publicKey);
  } catch {
    return false; // a signature that is not a valid encoding is simply not valid
  }
}

export interface GatewayToken { token: string; expiresIn: number }

export async function verifyChallenge(
  deps: SignInDeps,
  gateway: string,
  input: { signer: string; signature: readonly number[] },
): Promise<GatewayToken> {
  const keys = await gatewayKeys(deps, gateway);
  const signerKey = decodePublicKey(input.signer, 'signer');
  if (input.signature.length !== 64) throw invalid('signature must be 64 bytes');
  if (input.signer !== keys.authority && input.signer !== keys.signer) {
    throw forbidden('signer is neither the gateway authority nor its signer');
  }
  const signature = Uint8Array.from(input.signature);
  const enc = new TextEncoder();
  for (const nonce of await deps.nonces.live(gateway, deps.now())) {
    if (!(await signatureValid(signature, enc.encode(nonce), signerKey))) continue;
    if (!(await deps.nonces.consume(gateway, nonce))) break; // consumed a moment ago by another request
    const now = Math.floor(deps.now() / 1000);
    const { token } = await deps.ring.sign(
      { role: GATEWAY_ROLE, signer: input.signer },
      { subject: gateway, expiresAt: now + deps.tokenTtlSeconds },
    );
    return { token, expiresIn: deps.tokenTtlSeconds };
  }
  throw new AppError('unauthorized', 'signature does not match an outstanding challenge (expired, already used, or never issued)');
}
