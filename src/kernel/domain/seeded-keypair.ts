/**
 * The localnet's deterministic keypairs: a seed and a label give one keypair, the same on
 * every run (LOCALNET_SEED). Kept in the kernel because the demo route names the localnet's
 * first gateway from the seed alone, and product code does not import the localnet.
 */
import { createHash } from 'node:crypto';
import { Keypair } from '@solana/web3.js';

export function deriveKeypair(seed: string, label: string): Keypair {
  const bytes = createHash('sha256').update(`tributary-localnet:${seed}:${label}`).digest();
  return Keypair.fromSeed(bytes);
}
