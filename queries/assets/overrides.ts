/**
 * The built-in answers for the five well-known mints (DESIGN.md), used when the catalog
 * fails or does not know them, so checkout in the default currencies keeps working while
 * the catalog is away. Tiers: the four mainnet mints are on the catalog's strict list;
 * devnet USDC is Circle's devnet mint, vouched for here as verified.
 */
import type { TrustTier } from '../../infra/upstream/token-catalog.js';

export const WSOL_MINT = 'So11111111111111111111111111111111111111112';

export interface WellKnownAsset {
  mint: string;
  symbol: string;
  name: string;
  decimals: number;
  imageUrl: string | null;
  category: string;
  tier: TrustTier;
}

const logo = (mint: string) => `https://raw.githubusercontent.com/solana-labs/token-list/main/assets/mainnet/${mint}/logo.png`;

const LIST: readonly WellKnownAsset[] = [
  { mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', symbol: 'USDC', name: 'USD Coin', decimals: 6, imageUrl: logo('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'), category: 'stablecoin', tier: 'strict' },
  { mint: WSOL_MINT, symbol: 'SOL', name: 'Wrapped SOL', decimals: 9, imageUrl: logo(WSOL_MINT), category: 'native', tier: 'strict' },
  { mint: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', symbol: 'USDT', name: 'USDT', decimals: 6, imageUrl: logo('Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB'), category: 'stablecoin', tier: 'strict' },
  { mint: 'mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So', symbol: 'mSOL', name: 'Marinade staked SOL (mSOL)', decimals: 9, imageUrl: logo('mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So'), category: 'liquid-staking', tier: 'strict' },
  { mint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', symbol: 'USDC', name: 'USD Coin (devnet)', decimals: 6, imageUrl: null, category: 'stablecoin', tier: 'verified' },
];

export const WELL_KNOWN: Readonly<Record<string, WellKnownAsset>> = Object.freeze(
  Object.fromEntries(LIST.map((a) => [a.mint, Object.freeze({ ...a })])),
);
