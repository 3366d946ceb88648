/**
 * The fixtures file: what a test or a user needs to act on the localnet as any of its
 * actors (secret keys are base58 of the 64-byte ed25519 secret, as Solana CLIs use), and
 * each wallet's token accounts with their balances at genesis (base units, decimal strings).
 * It also says what the localnet answers as: its genesis hash and CAIP-2 network id.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Chain } from './chain.js';
import { PROGRAM_ID, type LocalnetCluster, type WellKnownMint } from './constants.js';
import { chainMints, mintAta, type Actors } from './genesis.js';
import { readTokenAccount } from './spl.js';

export interface FixtureBalance {
  mint: string; symbol: string; tokenAccount: string; amount: string;
  /** set for a mint of Token-2022 (the token account is then that program's ATA) */
  tokenProgram?: string;
}

export interface FixtureWallet {
  publicKey: string;
  secretKey: string;
  /** "user": the workload's policy owners; "spare": funded wallets that own nothing; "unfunded": SOL, no tokens */
  role: 'user' | 'spare' | 'unfunded';
  /** its associated token accounts at genesis; empty for the unfunded wallet */
  balances: FixtureBalance[];
}

export interface LocalnetFixtures {
  /** what the localnet answers as: `localnet`, or `devnet` (devnet's genesis hash) */
  cluster: LocalnetCluster;
  genesisHash: string;
  /** the CAIP-2 id x402 clients derive from the genesis hash: `solana:` + its first 32 characters */
  network: string;
  programId: string;
  rpcUrl: string;
  wsUrl: string;
  mints: WellKnownMint[];
  /** config.fee_recipient at genesis: the protocol fee goes to its token accounts */
  protocolFeeRecipient: string;
  gateways: {
    address: string; authority: string; authoritySecretKey: string; name: string; feeRecipient: string; feeBps: number;
    /** the gateway's execution signer, distinct from the authority */
    signer: string; signerSecretKey: string;
  }[];
  wallets: FixtureWallet[];
}

function balances(chain: Chain, owner: PublicKey): FixtureBalance[] {
  const out: FixtureBalance[] = [];
  for (const m of chainMints(chain)) {
    const ata = mintAta(owner, m);
    const acc = chain.store.get(ata.toBase58());
    const t = acc ? readTokenAccount(acc.data) : undefined;
    if (!t) continue;
    out.push({
      mint: m.address, symbol: m.symbol, tokenAccount: ata.toBase58(), amount: t.amount.toString(), ...(m.tokenProgram ? { tokenProgram: m.tokenProgram } : {}),
    });
  }
  return out;
}

export interface FixtureIdentity { cluster: LocalnetCluster; genesisHash: string; network: string }

export function buildFixtures(chain: Chain, actors: Actors, rpcUrl: string, wsUrl: string, identity: FixtureIdentity): LocalnetFixtures {
  const wallet = (k: { publicKey: PublicKey; secretKey: Uint8Array }, role: FixtureWallet['role']): FixtureWallet => ({
    publicKey: k.publicKey.toBase58(), secretKey: bs58.encode(k.secretKey), role, balances: balances(chain, k.publicKey),
  });
  return {
    ...identity,
    programId: PROGRAM_ID.toBase58(),
    rpcUrl,
    wsUrl,
    mints: chainMints(chain).map((m) => ({ ...m })),
    protocolFeeRecipient: actors.admin.publicKey.toBase58(),
    gateways: actors.gateways.map((g) => ({
      address: g.address.toBase58(), authority: g.authority.publicKey.toBase58(), authoritySecretKey: bs58.encode(g.authority.secretKey),
      name: g.name, feeRecipient: g.feeRecipient.publicKey.toBase58(), feeBps: g.feeBps,
      signer: g.signer.publicKey.toBase58(), signerSecretKey: bs58.encode(g.signer.secretKey),
    })),
    wallets: [
      ...actors.users.map((k) => wallet(k, 'user')),
      ...actors.spare.map((k) => wallet(k, 'spare')),
      wallet(actors.unfunded, 'unfunded'),
    ],
  };
}

export async function writeFixtures(path: string, fixtures: LocalnetFixtures): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(fixtures, null, 2)}\n`, { mode: 0o600 });
}
