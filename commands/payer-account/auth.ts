/**
 * Payer sign-in: POST /v1/me/auth/challenge {wallet} gives a nonce kept in Redis (every
 * node sees it) and bound to that wallet; the wallet signs the nonce's UTF-8 bytes
 * (ed25519, strict: infra/crypto/ed25519.ts) and POST /v1/me/auth/verify exchanges it for
 * a payer JWT (token.ts). The nonce is taken with GETDEL before the signature is checked:
 * whatever the outcome, it is used once, on one node.
 *
 * The nonce is `tributary-payer-sign-in|<service>|<wallet>|<random>`
 * (src/kernel/auth/signed-messages.ts): a text signed for gateway sign-in or a wallet
 * token is refused, and a payer nonce is no proof at POST /v1/tokens/issue (another
 * purpose, another key).
 *
 * Key: `<prefix>payer-auth:<nonce>` → the wallet, expiring with the nonce.
 */
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import { challengeProblem, challengeText, MAX_CHALLENGE_LENGTH, SIGN_PURPOSES } from '../../src/kernel/auth/signed-messages.js';
import { verifyStrict, weakPublicKey } from '../../infra/crypto/ed25519.js';
import { invalid, unauthorized } from '../../src/kernel/http/errors.js';
import { base58Input } from '../../src/kernel/http/base58-input.js';
import { decodeSignature } from '../tokens/wallet-proof.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import type { PayerChallenge, PayerToken } from '../../src/kernel/wire/answers/payer.js';
import { PAYER_ROLE, PAYER_TOKEN_TTL_SECONDS, payerAudience } from '../../src/kernel/auth/payer-token.js';

export interface PayerAuthDeps {
  redis: Redis;
  prefix: string;
  ttlSeconds: number;
  /** the service's name in the nonces (serviceName) */
  service: string;
  ring: Pick<KeyRing, 'sign' | 'audience'>;
  now: () => number;
}

// the answers' shapes are the wire module's, which the account page reads as well
export type { PayerChallenge, PayerToken } from '../../src/kernel/wire/answers/payer.js';

const nonceKey = (prefix: string, nonce: string): string => `${prefix}payer-auth:${nonce}`;

function decodeWallet(wallet: string): Uint8Array {
  const bytes = base58Input(wallet, 'wallet', 32, () => 'wallet must be a 32-byte public key');
  const weak = weakPublicKey(bytes);
  if (weak) throw invalid(`wallet is ${weak}`);
  return bytes;
}

export async function issuePayerChallenge(deps: PayerAuthDeps, wallet: string): Promise<PayerChallenge> {
  decodeWallet(wallet);
  const nonce = challengeText({ purpose: SIGN_PURPOSES.payerSignIn, service: deps.service, subject: wallet });
  await deps.redis.set(nonceKey(deps.prefix, nonce), wallet, 'EX', deps.ttlSeconds);
  return { nonce, wallet, expiresAt: deps.now() + deps.ttlSeconds * 1000 };
}

/** A payer JWT for the wallet whose signature of an outstanding nonce issued to it is given; 401 otherwise. */
export async function verifyPayerChallenge(
  deps: PayerAuthDeps, input: { wallet: string; nonce: string; signature: readonly number[] },
): Promise<PayerToken> {
  const key = decodeWallet(input.wallet);
  const signature = decodeSignature(input.signature);
  const problem = challengeProblem(input.nonce, { purpose: SIGN_PURPOSES.payerSignIn, service: deps.service, subject: input.wallet });
  if (problem) throw unauthorized(`${problem}: ask POST /v1/me/auth/challenge for one and sign it`);
  const issuedTo = input.nonce.length > MAX_CHALLENGE_LENGTH ? null : await deps.redis.getdel(nonceKey(deps.prefix, input.nonce));
  if (issuedTo === null) throw unauthorized('the nonce is unknown, expired or already used; ask POST /v1/me/auth/challenge for a new one');
  if (issuedTo !== input.wallet) throw unauthorized('the nonce was issued to another wallet');
  if (!verifyStrict(signature, new TextEncoder().encode(input.nonce), key)) {
    throw unauthorized(`the signature is not ${input.wallet}'s ed25519 signature of the nonce`);
  }
  const now = Math.floor(deps.now() / 1000);
  const { token } = await deps.ring.sign(
    { role: PAYER_ROLE },
    { subject: bs58.encode(key), expiresAt: now + PAYER_TOKEN_TTL_SECONDS, audience: payerAudience(deps.ring.audience) },
  );
  return { token, expiresIn: PAYER_TOKEN_TTL_SECONDS };
}
