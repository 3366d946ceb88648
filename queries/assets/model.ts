/**
 * The asset shapes of SPEC.md (search result, resolve data) and how a catalog token
 * becomes one. An asset's id is its mint: the catalog (Jupiter) identifies tokens by mint.
 */
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import { TRUST_TIERS, type CatalogToken, type TrustTier } from '../../infra/upstream/token-catalog.js';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../../src/kernel/domain/spl-token.js';
import { WELL_KNOWN, WSOL_MINT } from './overrides.js';

export interface PrimaryVariant { mint: string; decimals: number; kind: string; trustTier: TrustTier }

export interface AssetSearchResult {
  assetId: string;
  symbol: string;
  name: string;
  category: string;
  imageUrl: string | null;
  primaryVariant: PrimaryVariant;
}

export interface AssetResolveData {
  mint: string;
  assetId: string | null;
  symbol: string | null;
  name: string | null;
  decimals: number | null;
  imageUrl: string | null;
  category: string | null;
  tier: TrustTier | null;
}

export function categoryOf(t: Pick<CatalogToken, 'mint' | 'tags'>): string {
  if (t.mint === WSOL_MINT) return 'native';
  const known = WELL_KNOWN[t.mint];
  if (known?.category) return known.category;
  if (t.tags.some((tag) => tag === 'stable' || tag === 'stablecoin')) return 'stablecoin';
  if (t.tags.includes('lst')) return 'liquid-staking';
  return 'token';
}

/** the token program a mint lives under, or undefined when it is not one we can pay with */
export function variantKind(tokenProgram: string | null): string | undefined {
  if (tokenProgram === null || tokenProgram === TOKEN_PROGRAM) return 'spl-token';
  if (tokenProgram === TOKEN_2022_PROGRAM) return 'spl-token-2022';
  return undefined;
}

/**
 * A search result only for a token with a usable primary variant: a valid base58 mint,
 * known decimals, a symbol, and a token program we can pay with.
 */
export function toSearchResult(t: CatalogToken): AssetSearchResult | undefined {
  const kind = variantKind(t.tokenProgram);
  if (!isPublicKey(t.mint) || t.decimals === null || t.symbol === null || kind === undefined) return undefined;
  return {
    assetId: t.mint,
    symbol: t.symbol,
    name: t.name ?? t.symbol,
    category: categoryOf(t),
    imageUrl: t.imageUrl,
    primaryVariant: { mint: t.mint, decimals: t.decimals, kind, trustTier: t.trustTier },
  };
}

export function toResolveData(t: CatalogToken): AssetResolveData {
  return {
    mint: t.mint,
    assetId: t.mint,
    symbol: t.symbol,
    name: t.name,
    decimals: t.decimals,
    imageUrl: t.imageUrl,
    category: categoryOf(t),
    tier: t.trustTier,
  };
}

const nullable = (s: JsonSchema): JsonSchema => ({ ...s, nullable: true });
const tierSchema: JsonSchema = { type: 'string', enum: [...TRUST_TIERS], description: 'trust tier from the catalog tags: strict > verified > community > unknown' };

export const assetSearchResultSchema: JsonSchema = {
  type: 'object',
  required: ['assetId', 'symbol', 'name', 'category', 'imageUrl', 'primaryVariant'],
  properties: {
    assetId: { type: 'string', description: 'the asset id (its mint)' },
    symbol: { type: 'string' },
    name: { type: 'string' },
    category: { type: 'string', description: 'native, stablecoin, liquid-staking or token' },
    imageUrl: nullable({ type: 'string' }),
    primaryVariant: {
      type: 'object',
      required: ['mint', 'decimals', 'kind', 'trustTier'],
      properties: {
        mint: { type: 'string', description: 'base58 mint' },
        decimals: { type: 'integer' },
        kind: { type: 'string', description: 'spl-token or spl-token-2022' },
        trustTier: tierSchema,
      },
    },
  },
};

export const assetResolveSchema: JsonSchema = {
  type: 'object',
  required: ['mint', 'assetId', 'symbol', 'name', 'decimals', 'imageUrl', 'category'],
  properties: {
    mint: { type: 'string', description: 'base58 mint' },
    assetId: nullable({ type: 'string' }),
    symbol: nullable({ type: 'string', description: 'null when no provider supplies one' }),
    name: nullable({ type: 'string' }),
    decimals: nullable({ type: 'integer' }),
    imageUrl: nullable({ type: 'string', format: 'uri' }),
    category: nullable({ type: 'string' }),
    tier: nullable(tierSchema),
  },
};
