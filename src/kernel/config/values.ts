/** Value parsers and the per-cluster constants the configuration sections read. */
import type { EnvReader } from './env-reader.js';

export const CLUSTERS = ['mainnet', 'devnet', 'localnet'] as const;
export type Cluster = (typeof CLUSTERS)[number];

/**
 * CAIP-2 ids: `solana:` and the first 32 characters of the cluster's genesis hash. The
 * localnet has no genesis hash of note, so it is named plainly; the built-in localnet
 * run with SOLANA_CLUSTER=devnet answers devnet's genesis hash, so devnet's id holds.
 */
export const NETWORKS: Readonly<Record<Cluster, string>> = {
  mainnet: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  devnet: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  localnet: 'solana:localnet',
};

export const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_DEVNET = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const DEFAULT_STABLECOIN: Readonly<Record<Cluster, string>> = {
  mainnet: USDC_MAINNET,
  devnet: USDC_DEVNET,
  localnet: USDC_DEVNET,
};

export const ms = (list: string[], name: string, r: EnvReader): number[] =>
  list.map((s) => {
    const n = Number(s);
    r.check(name, Number.isSafeInteger(n) && n >= 0, 'a comma-separated list of milliseconds', s);
    return n;
  });

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `500ms`, `30s`, `5m`, `1h`, `2d` (a bare number is milliseconds). */
export function parseDurationMs(s: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(s.trim());
  if (!m?.[1]) return undefined;
  const n = Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1);
  return Number.isSafeInteger(n) ? n : undefined;
}

export const durations = (list: string[], name: string, r: EnvReader): number[] => {
  r.check(name, list.length > 0, 'at least one duration', '');
  return list.map((s) => {
    const n = parseDurationMs(s);
    r.check(name, n !== undefined, 'a comma-separated list of durations such as 30s,5m,1h,2d', s);
    return n ?? 0;
  });
};

export function deriveWsUrl(rpc: string): string {
  const u = new URL(rpc);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.port !== '') u.port = String(Number(u.port) + 1);
  return u.toString().replace(/\/$/, '');
}

export function parseKey32(s: string): Buffer | undefined {
  const b = /^[0-9a-fA-F]{64}$/.test(s) ? Buffer.from(s, 'hex') : Buffer.from(s, 'base64');
  return b.length === 32 ? b : undefined;
}
