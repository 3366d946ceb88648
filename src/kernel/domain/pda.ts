/**
 * The program's derived addresses (DESIGN.md, "Known facts about the program"):
 *   config            ["config"]
 *   gateway           ["gateway", authority]
 *   user payment      ["user_payment", owner, mint]
 *   payment policy    ["payment_policy", user_payment, policy_id u32 LE]
 *   composable policy ["composable_policy", user_payment, policy_id u32 LE]
 * findProgramAddressSync hashes once per bump tried (about a millisecond in total), and
 * projections and queries ask for the same few addresses again and again, so each deriver
 * memoizes in a bounded LRU of its own.
 */
import { PublicKey } from '@solana/web3.js';
import { createLru } from './lru.js';

export interface PdaDeriver {
  readonly programId: string;
  config(): string;
  gateway(authority: string): string;
  userPayment(owner: string, mint: string): string;
  paymentPolicy(userPayment: string, policyId: number): string;
  composablePolicy(userPayment: string, policyId: number): string;
}

export function u32le(n: number): Buffer {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`policy id ${n} is not a u32`);
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/**
 * Texts lately found to be public keys. The check decodes the base58 into a big number and
 * encodes it back, about 6 us, and the routes that take an address (the policy lists,
 * checked on every request, once per address filter) are asked for the same hot few again
 * and again; only valid texts are kept, so input that fails never fills it.
 */
const knownKeys = createLru<string, true>(10_000);

/** True when the value is a base58 string of exactly 32 bytes (a public key, on or off the curve), in its one spelling. */
export function isPublicKey(text: unknown): text is string {
  if (typeof text !== 'string' || text.length < 32 || text.length > 44) return false;
  if (knownKeys.get(text) !== undefined) return true;
  try {
    if (new PublicKey(text).toBase58() !== text) return false;
  } catch {
    return false;
  }
  knownKeys.set(text, true);
  return true;
}

export function createPdaDeriver(programId: string, capacity = 100_000): PdaDeriver {
  const program = new PublicKey(programId);
  const cache = createLru<string, string>(capacity);
  const key = (s: string) => new PublicKey(s).toBytes();

  function find(tag: string, seeds: () => Uint8Array[]): string {
    const hit = cache.get(tag);
    if (hit !== undefined) return hit;
    const [address] = PublicKey.findProgramAddressSync(seeds(), program);
    const text = address.toBase58();
    cache.set(tag, text);
    return text;
  }

  return {
    programId,
    config: () => find('c', () => [Buffer.from('config')]),
    gateway: (authority) => find(`g:${authority}`, () => [Buffer.from('gateway'), key(authority)]),
    userPayment: (owner, mint) => find(`u:${owner}:${mint}`, () => [Buffer.from('user_payment'), key(owner), key(mint)]),
    paymentPolicy: (up, id) => find(`p:${up}:${id}`, () => [Buffer.from('payment_policy'), key(up), u32le(id)]),
    composablePolicy: (up, id) => find(`x:${up}:${id}`, () => [Buffer.from('composable_policy'), key(up), u32le(id)]),
  };
}
