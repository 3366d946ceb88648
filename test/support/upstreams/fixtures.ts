/**
 * The tokens and pools the stand-in upstreams serve, each stand-in in its own venue's
 * format. Real mints for the well-known tokens; deterministic keys for the made-up ones.
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';

export const key = (label: string): string => bs58.encode(createHash('sha256').update(label).digest());

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EFLkv9e2Qx3UiGm8gTHSj';

export interface FixtureToken {
  id: string;
  symbol: string;
  name: string;
  decimals: number | null;
  tags: string[];
  isVerified: boolean;
  tokenProgram: string;
  icon: string | null;
}

const t = (id: string, symbol: string, name: string, decimals: number | null, tags: string[], isVerified: boolean,
  tokenProgram = TOKEN_PROGRAM): FixtureToken => ({ id, symbol, name, decimals, tags, isVerified, tokenProgram, icon: `https://icons.example/${symbol.toLowerCase()}.png` });

export const MINTS = {
  USDC: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  SOL: 'So11111111111111111111111111111111111111112',
  USDT: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
  MSOL: 'mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So',
  USDC_DEVNET: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  JUP: 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN',
  BONK: 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
  COMM: key('community-token'),
  RUG: key('unknown-token'),
  PYUSD: key('token-2022-stable'),
  NODEC: key('no-decimals'),
  ODD: key('odd-program'),
} as const;

export const TOKENS: readonly FixtureToken[] = [
  t(MINTS.USDC, 'USDC', 'USD Coin', 6, ['verified', 'community', 'strict'], true),
  t(MINTS.SOL, 'SOL', 'Wrapped SOL', 9, ['verified', 'community', 'strict'], true),
  t(MINTS.USDT, 'USDT', 'USDT', 6, ['verified', 'community', 'strict'], true),
  t(MINTS.MSOL, 'mSOL', 'Marinade staked SOL (mSOL)', 9, ['verified', 'community', 'lst'], true),
  t(MINTS.JUP, 'JUP', 'Jupiter', 6, ['verified', 'community', 'strict'], true),
  t(MINTS.BONK, 'Bonk', 'Bonk', 5, ['verified', 'community'], true),
  t(MINTS.COMM, 'COMM', 'Community Coin', 6, ['community'], false),
  t(MINTS.RUG, 'RUG', 'Solana USD Rug', 6, [], false),
  t(MINTS.PYUSD, 'PYUSD', 'PayPal USD', 6, ['verified'], true, TOKEN_2022_PROGRAM),
  t(MINTS.NODEC, 'NODEC', 'No Decimals Coin', null, ['verified'], true),
  t(MINTS.ODD, 'ODD', 'Odd Program Coin', 6, ['verified'], true, key('some-other-program')),
  // an entry whose id is not a mint at all: never passed on
  t('not-a-mint', 'USDX', 'USD Broken Entry', 6, ['verified'], true),
];

export interface FixturePool {
  venue: 'meteora' | 'raydium' | 'whirlpool';
  address: string;
  x: string;
  y: string;
  tvl: number;
  /** fraction: 0.0025 = 0.25% */
  fee: number;
}

const p = (venue: FixturePool['venue'], label: string, x: string, y: string, tvl: number, fee: number): FixturePool =>
  ({ venue, address: key(`pool:${venue}:${label}`), x, y, tvl, fee });

export const POOLS: readonly FixturePool[] = [
  p('meteora', 'sol-usdc', MINTS.SOL, MINTS.USDC, 5_200_000, 0.001),
  p('raydium', 'sol-usdc', MINTS.SOL, MINTS.USDC, 9_800_000, 0.0025),
  p('whirlpool', 'sol-usdc', MINTS.SOL, MINTS.USDC, 31_000_000, 0.0004),
  p('whirlpool', 'usdc-usdt', MINTS.USDC, MINTS.USDT, 12_000_000, 0.0001),
  p('meteora', 'msol-sol', MINTS.MSOL, MINTS.SOL, 800_000, 0.0001),
  p('raydium', 'bonk-sol', MINTS.BONK, MINTS.SOL, 4_000_000, 0.0025),
  p('meteora', 'comm-usdc', MINTS.COMM, MINTS.USDC, 90_000, 0.003),
  // huge TVL, untrusted token: ranks below every trusted pool
  p('raydium', 'rug-usdc', MINTS.RUG, MINTS.USDC, 99_000_000, 0.0025),
  p('whirlpool', 'rug-comm', MINTS.RUG, MINTS.COMM, 10_000, 0.003),
];

/** venue URLs that refuse connections at once: tests that do not exercise venues never reach the internet */
export const NO_VENUES: Readonly<Record<string, string>> = {
  METEORA_API_URL: 'http://127.0.0.1:9', RAYDIUM_API_URL: 'http://127.0.0.1:9', ORCA_API_URL: 'http://127.0.0.1:9',
};

export const tokenOf = (mint: string): FixtureToken | undefined => TOKENS.find((x) => x.id === mint);
