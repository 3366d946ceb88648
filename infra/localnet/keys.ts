/**
 * Deterministic keys and cached PDA derivation. Every key of the localnet comes from
 * sha256(seed, label) so that a seed reproduces the same wallets, gateways and policies.
 */
import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, PROGRAM_ID, TOKEN_PROGRAM_ID } from './constants.js';

export { deriveKeypair } from '../../src/kernel/domain/seeded-keypair.js';

/** Deterministic pseudo-random 32 bytes (blockhashes, filler addresses). */
export function deriveHash(seed: string, label: string): Buffer {
  return createHash('sha256').update(`tributary-localnet-hash:${seed}:${label}`).digest();
}

const base58 = new WeakMap<PublicKey, string>();

/**
 * A public key's base58, computed once per key object: web3.js recomputes it on every
 * call, and the localnet asks for the same long-lived keys thousands of times a second.
 */
export function keyString(key: PublicKey): string {
  let s = base58.get(key);
  if (s === undefined) {
    s = key.toBase58();
    base58.set(key, s);
  }
  return s;
}

const pdaCache = new Map<string, PublicKey>();
const bumps = new Map<string, number>();

/** findProgramAddressSync costs a few hashes per bump; the workload asks for the same PDAs often. */
export function findPda(seeds: readonly Uint8Array[], programId: PublicKey = PROGRAM_ID): PublicKey {
  const key = `${keyString(programId)}|${seeds.map((s) => Buffer.from(s).toString('hex')).join('|')}`;
  const hit = pdaCache.get(key);
  if (hit) return hit;
  const [pda, bump] = PublicKey.findProgramAddressSync(seeds.map((s) => Buffer.from(s)), programId);
  if (pdaCache.size > 200_000) {
    pdaCache.clear();
    bumps.clear();
  }
  pdaCache.set(key, pda);
  bumps.set(keyString(pda), bump);
  return pda;
}

/** The bump of a PDA found through findPda (stored in accounts as the program does). */
export function bumpOf(pda: PublicKey): number {
  return bumps.get(keyString(pda)) ?? 255;
}

export function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

export const pdas = {
  config: (): PublicKey => findPda([Buffer.from('config')]),
  gateway: (authority: PublicKey): PublicKey => findPda([Buffer.from('gateway'), authority.toBytes()]),
  userPayment: (owner: PublicKey, mint: PublicKey): PublicKey =>
    findPda([Buffer.from('user_payment'), owner.toBytes(), mint.toBytes()]),
  paymentPolicy: (userPayment: PublicKey, policyId: number): PublicKey =>
    findPda([Buffer.from('payment_policy'), userPayment.toBytes(), u32le(policyId)]),
  composablePolicy: (userPayment: PublicKey, policyId: number): PublicKey =>
    findPda([Buffer.from('composable_policy'), userPayment.toBytes(), u32le(policyId)]),
  paymentsDelegate: (): PublicKey => findPda([Buffer.from('payments')]),
  /** Anchor's #[event_cpi] signer PDA */
  eventAuthority: (): PublicKey => findPda([Buffer.from('__event_authority')]),
  /** the ATA of `owner` for `mint` of the token program that owns the mint (SPL Token unless said) */
  associatedToken: (owner: PublicKey, mint: PublicKey, tokenProgram: PublicKey = TOKEN_PROGRAM_ID): PublicKey =>
    findPda([owner.toBytes(), tokenProgram.toBytes(), mint.toBytes()], ASSOCIATED_TOKEN_PROGRAM_ID),
};
