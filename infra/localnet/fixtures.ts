/**
 * The fixtures file: what a test or a user needs to act on the localnet as any of its
 * actors (secret keys are base58 of the 64-byte ed25519 secret, as Solana CLIs use).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import bs58 from 'bs58';
import { PROGRAM_ID, WELL_KNOWN_MINTS, type WellKnownMint } from './constants.js';
import type { Actors } from './genesis.js';

export interface LocalnetFixtures {
  programId: string;
  rpcUrl: string;
  wsUrl: string;
  mints: WellKnownMint[];
  gateways: { address: string; authority: string; authoritySecretKey: string; name: string; feeRecipient: string }[];
  /** the workload's policy owners (role "user"), then funded wallets that own nothing (role "spare") */
  wallets: { publicKey: string; secretKey: string; role: 'user' | 'spare' }[];
}

export function buildFixtures(actors: Actors, rpcUrl: string, wsUrl: string): LocalnetFixtures {
  return {
    programId: PROGRAM_ID.toBase58(),
    rpcUrl,
    wsUrl,
    mints: WELL_KNOWN_MINTS.map((m) => ({ ...m })),
    gateways: actors.gateways.map((g) => ({
      address: g.address.toBase58(), authority: g.authority.publicKey.toBase58(), authoritySecretKey: bs58.encode(g.authority.secretKey),
      name: g.name, feeRecipient: g.feeRecipient.publicKey.toBase58(),
    })),
    wallets: [
      ...actors.users.map((k) => ({ publicKey: k.publicKey.toBase58(), secretKey: bs58.encode(k.secretKey), role: 'user' as const })),
      ...actors.spare.map((k) => ({ publicKey: k.publicKey.toBase58(), secretKey: bs58.encode(k.secretKey), role: 'spare' as const })),
    ],
  };
}

export async function writeFixtures(path: string, fixtures: LocalnetFixtures): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(fixtures, null, 2)}\n`, { mode: 0o600 });
}
