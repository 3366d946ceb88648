/**
 * Proof that the caller of POST /v1/tokens/issue holds the wallet the token is for.
 * POST /v1/tokens/challenge {walletPublicKey} gives a nonce, kept in Redis (so every node
 * sees it) for TOKEN_CHALLENGE_TTL_SECONDS (60) and bound to that wallet; the wallet signs
 * the nonce's UTF-8 bytes (ed25519, strict: infra/crypto/ed25519.ts) and sends nonce and
 * signature with the issue request. The nonce is taken with GETDEL before the signature is
 * checked: whatever the outcome, it is used once, on one node.
 *
 * The nonce is `tributary-wallet-token|<service>|<wallet>|<random>`
 * (src/kernel/auth/signed-messages.ts), and a nonce presented is checked to be one of this
 * service for the wallet: a text signed for gateway sign-in or anything else is refused.
 *
 * Key: `<prefix>tokens:challenge:<nonce>` → the wallet, expiring with the nonce.
 */
import bs58 from 'bs58';
import { challengeProblem, challengeText, MAX_CHALLENGE_LENGTH, SIGN_PURPOSES } from '../../src/kernel/auth/signed-messages.js';
import type { Redis } from 'ioredis';
import { verifyStrict, weakPublicKey } from '../../infra/crypto/ed25519.js';
import { invalid, unauthorized } from '../../src/kernel/http/errors.js';
import { base58Input } from '../../src/kernel/http/base58-input.js';

export interface WalletChallenge { nonce: string; walletPublicKey: string; expiresAt: number }

export interface WalletChallenges {
  issue(walletPublicKey: string, nowMs: number): Promise<WalletChallenge>;
  /** the wallet the nonce was issued to, removing it; undefined when unknown, expired or used */
  take(nonce: string): Promise<string | undefined>;
  /** the service's name in the nonces */
  service: string;
}

export function createWalletChallenges(redis: Redis, prefix: string, ttlSeconds: number, service: string): WalletChallenges {
  const key = (nonce: string) => `${prefix}tokens:challenge:${nonce}`;
  return {
    service,
    async issue(walletPublicKey, nowMs) {
      const bytes = decodeKey(walletPublicKey);
      const weak = weakPublicKey(bytes);
      if (weak) throw invalid(`walletPublicKey is ${weak}`);
      const nonce = challengeText({ purpose: SIGN_PURPOSES.walletToken, service, subject: walletPublicKey });
      await redis.set(key(nonce), walletPublicKey, 'EX', ttlSeconds);
      return { nonce, walletPublicKey, expiresAt: nowMs + ttlSeconds * 1000 };
    },
    async take(nonce) {
      if (nonce.length > MAX_CHALLENGE_LENGTH) return undefined;
      return (await redis.getdel(key(nonce))) ?? undefined;
    },
  };
}

function decodeKey(value: string): Uint8Array {
  return base58Input(value, 'walletPublicKey', 32, () => 'walletPublicKey must be a 32-byte public key');
}

/** A signature as 64 integers (as gateway verify takes it) or base58 text; a 400 otherwise. */
export function decodeSignature(value: readonly number[] | string): Uint8Array {
  if (typeof value === 'string') return base58Input(value, 'signature', 64, () => 'signature must be 64 bytes');
  if (value.length !== 64 || value.some((b) => !Number.isInteger(b) || b < 0 || b > 255)) throw invalid('signature must be 64 integers from 0 to 255');
  return Uint8Array.from(value);
}

/** the subject field of a challenge text ('' when it is none) */
function parseSubject(text: string): string {
  return text.split('|')[2] ?? '';
}

export interface WalletProofInput { nonce: string; signature: readonly number[] | string; walletPublicKey?: string }

/**
 * The wallet proven by a signed challenge, or a 401: the nonce unknown, expired or used,
 * issued to another wallet than the one named, or the signature not that wallet's.
 */
export async function proveWallet(challenges: WalletChallenges, input: WalletProofInput): Promise<string> {
  const signature = decodeSignature(input.signature);
  // purpose and service here; the wallet it names is the one it was issued to, compared below
  const problem = challengeProblem(input.nonce, { purpose: SIGN_PURPOSES.walletToken, service: challenges.service, subject: parseSubject(input.nonce) });
  if (problem) throw unauthorized(`${problem}: ask POST /v1/tokens/challenge for one and sign it`);
  const wallet = await challenges.take(input.nonce);
  if (wallet === undefined) throw unauthorized('the nonce is unknown, expired or already used; ask POST /v1/tokens/challenge for a new one');
  if (input.walletPublicKey !== undefined && input.walletPublicKey !== wallet) throw unauthorized('the nonce was issued to another wallet');
  if (!verifyStrict(signature, new TextEncoder().encode(input.nonce), bs58.decode(wallet))) {
    throw unauthorized(`the signature is not ${wallet}'s ed25519 signature of the nonce`);
  }
  return wallet;
}
