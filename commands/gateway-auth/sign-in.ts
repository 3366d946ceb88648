/**
 * Gateway sign-in: a challenge nonce, then an ed25519 signature over its UTF-8 bytes by
 * the gateway's authority or its signer, exchanged for a gateway JWT. An inactive gateway
 * cannot sign in. Verification is strict (infra/crypto/ed25519.ts: RFC 8032, small-order
 * keys refused, so a cleared all-zero signer signs nothing) and happens once per request:
 * the client names the nonce it signed; without it, the gateway's newest nonce is tried.
 * A named nonce must be a gateway sign-in challenge of this service for this gateway
 * (signed-messages.ts): a text signed for another purpose, service or gateway is refused.
 */
import { verifyStrict } from '../../infra/crypto/ed25519.js';
import { AppError, forbidden, invalid, notFound } from '../../src/kernel/http/errors.js';
import { base58Input } from '../../src/kernel/http/base58-input.js';
import { GATEWAY_ROLE, gatewaySessionAudience } from '../../src/kernel/auth/gateway-token.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import type { Challenge, NonceStore } from './nonces.js';
import { challengeProblem, SIGN_PURPOSES } from '../../src/kernel/auth/signed-messages.js';

export interface SignInDeps {
  lookup: GatewayLookup;
  nonces: NonceStore;
  ring: KeyRing;
  now: () => number;
  tokenTtlSeconds: number;
  /** the service's name in challenges (serviceName) */
  service: string;
}

/** A base58 string that decodes to exactly 32 bytes (an ed25519 public key), or a 400. */
export function decodePublicKey(value: string, field: string): Uint8Array {
  return base58Input(value, field, 32, () => `${field} must be a 32-byte public key`);
}

async function gatewayKeys(deps: SignInDeps, gateway: string) {
  decodePublicKey(gateway, 'gateway');
  const keys = await deps.lookup(gateway);
  if (!keys) throw notFound(`unknown gateway ${gateway}`);
  if (!keys.active) throw forbidden(`gateway ${gateway} is inactive`);
  return keys;
}

export async function createChallenge(deps: SignInDeps, gateway: string): Promise<Challenge> {
  await gatewayKeys(deps, gateway);
  return deps.nonces.issue(gateway, deps.now());
}

export interface GatewayToken { token: string; expiresIn: number }

export async function verifyChallenge(
  deps: SignInDeps,
  gateway: string,
  input: { signer: string; signature: readonly number[]; nonce?: string },
): Promise<GatewayToken> {
  const keys = await gatewayKeys(deps, gateway);
  const signerKey = decodePublicKey(input.signer, 'signer');
  if (input.signature.length !== 64) throw invalid('signature must be 64 bytes');
  if (input.signer !== keys.authority && input.signer !== keys.signer) {
    throw forbidden('signer is neither the gateway authority nor its signer');
  }
  const signature = Uint8Array.from(input.signature);
  if (input.nonce !== undefined) {
    const problem = challengeProblem(input.nonce, { purpose: SIGN_PURPOSES.gatewaySignIn, service: deps.service, subject: gateway });
    if (problem) throw new AppError('unauthorized', `${problem}: ask POST /v1/gateway/${gateway}/auth/challenge for one and sign it`);
  }
  const nonce = input.nonce ?? await deps.nonces.newest(gateway, deps.now());
  if (nonce !== undefined && await deps.nonces.outstanding(gateway, nonce, deps.now()) && verifyStrict(signature, new TextEncoder().encode(nonce), signerKey)
    && await deps.nonces.consume(gateway, nonce)) { // false: consumed a moment ago by another request
    const now = Math.floor(deps.now() / 1000);
    const { token } = await deps.ring.sign(
      { role: GATEWAY_ROLE, signer: input.signer },
      { subject: gateway, expiresAt: now + deps.tokenTtlSeconds, audience: gatewaySessionAudience(deps.ring.audience, gateway) },
    );
    return { token, expiresIn: deps.tokenTtlSeconds };
  }
  throw new AppError('unauthorized', 'signature does not match an outstanding challenge (expired, already used, or never issued)');
}
