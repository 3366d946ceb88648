/**
 * Proof that the caller of POST /v1/tokens/issue holds the wallet the token is for.
 * POST /v1/tokens/challenge {walletPublicKey} gives a nonce, kept in Redis (so every node
 * sees it) for TOKEN_CHALLENGE_TTL_SECONDS (60) and bound to that wallet; the wallet signs
 * the nonce's UTF-8 bytes (ed25519, strict: infra/crypto/ed25519.ts) and sends nonce and
 * signature with the issue request. The nonce is taken with GETDEL before the signature is
 * checked: whatever the outcome, it is used once, on one node.
 *
 * Key: `<prefix>tokens:challenge:<nonce>` → the wallet, expiring with the nonce.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import { verifyStrict, weakPublicKey } from '../../infra/crypto/ed25519.js';
import { invalid, unauthorized } from '../../src/kernel/http/errors.js';
import { base58Input } from '../../src/kernel/http/base58-input.js';

export interface WalletChallenge { nonce: string; walletPublicKey: string; expiresAt: number }

export interface WalletChallenges {
  issue(walletPublicKey: string, nowMs: number): Promise<WalletChallenge>;
  /** the wallet the nonce was issued to, removing it; undefined when unknown, expired or used */
  take(nonce: string): Promise<string | undefined>;
}

export function createWalletChallenges(redis: Redis, prefix: string, ttlSeconds: number): WalletChallenges {
  const key = (nonce: string) => `${prefix}tokens:challenge:${nonce}`;
  return {
    async issue(walletPublicKey, nowMs) {
      const bytes = decodeKey(walletPublicKey);
      const weak = weakPublicKey(bytes);
      if (weak) throw invalid(`walletPublicKey is ${weak}`);
      const nonce = `tributary-token:${bs58.encode(randomBytes(32))}`;
      await redis.set(key(nonce), walletPublicKey, 'EX', ttlSeconds);
      return { nonce, walletPublicKey, expiresAt: nowMs + ttlSeconds * 1000 };
    },
    async take(nonce) {
      if (nonce.length > 128) return undefined;
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

export interface WalletProofInput { nonce: string; signature: readonly number[] | string; walletPublicKey?: string }

/**
 * The wallet proven by a signed challenge, or a 401: the nonce unknown, expired or used,
 * issued to another wallet than the one named, or the signature not that wallet's.
 */
export async function proveWallet(challenges: WalletChallenges, input: WalletProofInput): Promise<string> {
  const signature = decodeSignature(input.signature);
  const wallet = await challenges.take(input.nonce);
  if (wallet === undefined) throw unauthorized('the nonce is unknown, expired or already used; ask POST /v1/tokens/challenge for a new one');
  if (input.walletPublicKey !== undefined && input.walletPublicKey !== wallet) throw unauthorized('the nonce was issued to another wallet');
  if (!verifyStrict(signature, new TextEncoder().encode(input.nonce), bs58.decode(wallet))) {
    throw unauthorized(`the signature is not ${wallet}'s ed25519 signature of the nonce`);
  }
  return wallet;
}
