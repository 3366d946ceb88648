/**
 * The localnet in-process, answering as Solana devnet: what tests of the x402 `exact`
 * scheme pay and settle against. Devnet's genesis hash (so `@x402/svm` names it
 * solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1 and takes an RPC URL for it), devnet USDC on
 * SPL Token and devnet's PYUSD on Token-2022 as real mints, and funded wallets: those of
 * the fixtures, and any number more drawn by label (SOL for fees and 1,000,000 whole
 * tokens of every mint in associated token accounts).
 *
 * No workload runs (rate 0): balances move only by what a test sends.
 */
import { createKeyPairSignerFromBytes, type KeyPairSigner } from '@solana/kit';
import { Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { DEVNET_TOKEN_2022_MINTS, TOKEN_2022_PROGRAM_ID, type WellKnownMint } from '../../infra/localnet/constants.js';
import { chainMints, FIXTURE_TOKENS, fundWallet, mintAta } from '../../infra/localnet/genesis.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { readTokenAccount } from '../../infra/localnet/spl.js';
import { deriveKeypair } from '../../src/kernel/domain/seeded-keypair.js';

export const DEVNET_NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const DEVNET_USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
/** devnet's PYUSD: a Token-2022 mint of 6 decimals */
export const DEVNET_PYUSD = DEVNET_TOKEN_2022_MINTS[0]!.address;
export const TOKEN_2022 = TOKEN_2022_PROGRAM_ID.toBase58();
/** base units of each mint a funded wallet starts with (6 decimals) */
export const FUNDED_BASE_UNITS = FIXTURE_TOKENS * 1_000_000n;

export interface DevnetWallet {
  address: string;
  keypair: Keypair;
  /** @solana/kit's signer of the same key, as @x402/svm's client and facilitator take it */
  signer(): Promise<KeyPairSigner>;
}

export interface DevnetLocalnet {
  ln: Localnet;
  rpcUrl: string;
  network: typeof DEVNET_NETWORK;
  /** the fixtures' funded wallets that nothing else uses (role "spare") */
  spare: DevnetWallet[];
  /** a wallet funded now: SOL and every mint; the same label gives the same wallet */
  fund(label: string): DevnetWallet;
  /** a token balance in base units: the owner's associated token account of the mint (0 when it has none) */
  tokenBalance(owner: string, mint: string): bigint;
  /** an account's lamports (0 when it does not exist) */
  lamports(address: string): number;
  close(): Promise<void>;
}

export function devnetWallet(keypair: Keypair): DevnetWallet {
  return {
    address: keypair.publicKey.toBase58(),
    keypair,
    signer: () => createKeyPairSignerFromBytes(keypair.secretKey),
  };
}

export async function startDevnetLocalnet(seed = 'devnet-test'): Promise<DevnetLocalnet> {
  const ln = await startLocalnet({ port: 0, seed, rate: 0, cluster: 'devnet' });
  const mint = (address: string): WellKnownMint => {
    const m = chainMints(ln.chain).find((x) => x.address === address);
    if (!m) throw new Error(`the devnet localnet has no mint ${address}`);
    return m;
  };
  return {
    ln,
    rpcUrl: ln.rpcUrl,
    network: DEVNET_NETWORK,
    spare: ln.fixtures.wallets.filter((w) => w.role === 'spare').map((w) => devnetWallet(Keypair.fromSecretKey(bs58.decode(w.secretKey)))),
    fund: (label) => {
      const keypair = deriveKeypair(seed, `devnet-test-wallet:${label}`);
      fundWallet(ln.chain, keypair.publicKey);
      return devnetWallet(keypair);
    },
    tokenBalance: (owner, address) => {
      const acc = ln.chain.store.get(mintAta(new PublicKey(owner), mint(address)).toBase58());
      return (acc && readTokenAccount(acc.data)?.amount) ?? 0n;
    },
    lamports: (address) => ln.chain.store.get(address)?.lamports ?? 0,
    close: () => ln.close(),
  };
}
