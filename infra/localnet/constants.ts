/**
 * Fixed addresses and numbers of the emulated cluster. The well-known mints are the real
 * mainnet/devnet addresses so that the service's defaults (USDC as the stablecoin) work
 * unchanged against the localnet.
 */
import { PublicKey } from '@solana/web3.js';
import { PROGRAM_ID as PROGRAM_ID_TEXT } from '../../src/kernel/idl/index.js';

export const PROGRAM_ID = new PublicKey(PROGRAM_ID_TEXT);
export const SYSTEM_PROGRAM_ID = new PublicKey('11111111111111111111111111111111');
export const TOKEN_PROGRAM_ID = new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM_ID = new PublicKey('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
/** SPL Memo v2 (checks that every account it is given signed) and the legacy v1, which takes no accounts */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
export const MEMO_V1_PROGRAM_ID = new PublicKey('Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo');
export const ASSOCIATED_TOKEN_PROGRAM_ID = new PublicKey('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');
export const COMPUTE_BUDGET_PROGRAM_ID = new PublicKey('ComputeBudget111111111111111111111111111111');
export const BPF_UPGRADEABLE_LOADER_ID = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');
/**
 * A stand-in for "some other program" that logs `Program data:` lines of its own. The
 * workload uses it to prove that the indexer only decodes data logged by Tributary.
 */
export const OTHER_PROGRAM_ID = new PublicKey('NoiseProgram1111111111111111111111111111111');

/** Anchor's EVENT_IX_TAG: sha256("anchor:event")[..8], little-endian u64 0x1d9acb512ea545e4. */
export const EVENT_IX_TAG = Buffer.from([0xe4, 0x45, 0xa5, 0x2e, 0x51, 0xcb, 0x9a, 0x1d]);

export interface WellKnownMint {
  address: string; decimals: number; symbol: string;
  /** the program owning the mint; unset = the SPL Token program */
  tokenProgram?: string;
}
export const WELL_KNOWN_MINTS: readonly WellKnownMint[] = [
  { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6, symbol: 'USDC' },
  { address: 'So11111111111111111111111111111111111111112', decimals: 9, symbol: 'wSOL' },
  { address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6, symbol: 'USDT' },
  { address: 'mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So', decimals: 9, symbol: 'mSOL' },
  { address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', decimals: 6, symbol: 'USDC-dev' },
];

/**
 * Devnet's Token-2022 stablecoins (the x402 packages' defaults for devnet besides USDC),
 * created only when the localnet answers as devnet: plain mints without extensions.
 */
export const DEVNET_TOKEN_2022_MINTS: readonly WellKnownMint[] = [
  { address: 'CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM', decimals: 6, symbol: 'PYUSD-dev', tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58() },
  { address: '4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7', decimals: 6, symbol: 'USDG-dev', tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58() },
];

/** What the localnet answers as: its own cluster (a genesis hash of its seed) or Solana devnet. */
export type LocalnetCluster = 'localnet' | 'devnet';
/** Solana devnet's genesis hash; its first 32 characters are the CAIP-2 reference solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1. */
export const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';

export const SLOT_MS = 400;
/** Blockhashes stay valid for 150 blocks on Solana; clients compute expiry from it. */
export const BLOCKHASH_VALIDITY = 150;
/** Depth after which a slot is reported `finalized` (Solana's supermajority root lag). */
export const FINALITY_DEPTH = 32;
export const LAMPORTS_PER_SIGNATURE = 5000;
/** the compute units an instruction gets when no SetComputeUnitLimit says otherwise */
export const COMPUTE_UNIT_LIMIT = 200_000;
/** the most a transaction may ask for */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
