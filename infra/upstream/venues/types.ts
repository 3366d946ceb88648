/**
 * What every pool venue client answers, whatever the venue's own format: one pool with
 * its two tokens as the venue describes them (catalog enrichment comes later), its TVL
 * in USD, its fee as a fraction (0.0025 = 0.25%), and the venue-specific rest in extras.
 */
export const VENUES = ['meteora', 'raydium', 'whirlpool'] as const;
export type Venue = (typeof VENUES)[number];

export interface VenueToken {
  mint: string;
  symbol: string | null;
  decimals: number | null;
  logoUri: string | null;
}

export interface VenuePool {
  venue: Venue;
  address: string;
  tokenX: VenueToken;
  tokenY: VenueToken;
  tvl: number | null;
  feeRate: number | null;
  extras: Record<string, unknown>;
}

export interface VenueClient {
  readonly venue: Venue;
  /** the venue's pools by TVL, descending, up to `max` (the sync worker's source) */
  listTop(max: number): Promise<VenuePool[]>;
  /** a live lookup for a query (symbol, name, pair or mint); [] when the venue cannot search for it */
  search(query: string, limit: number): Promise<VenuePool[]>;
}

/** A finite number from a number or a numeric string (venues send both), else null. */
export function num(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : null;
}

export function decimalsOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255 ? v : null;
}

export function record(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
