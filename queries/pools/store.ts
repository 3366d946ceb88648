/**
 * SQL of the `pools` table: the sync worker's replace-per-venue, and pool search's match
 * of a query against mints, symbols and addresses.
 */
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Database } from '../../infra/postgres/schema.js';
import type { Venue, VenuePool } from '../../infra/upstream/venues/types.js';

const CHUNK = 500;

/**
 * Replaces one venue's pools with `pools` in one transaction: upsert what the venue
 * listed, delete what it no longer lists. Readers see the old set or the new one.
 */
export async function replaceVenuePools(db: Db, venue: Venue, pools: readonly VenuePool[], syncedAt: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < pools.length; i += CHUNK) {
      const rows = pools.slice(i, i + CHUNK).map((p) => ({
        venue: p.venue,
        address: p.address,
        mint_x: p.tokenX.mint,
        mint_y: p.tokenY.mint,
        symbol_x: p.tokenX.symbol,
        symbol_y: p.tokenY.symbol,
        decimals_x: p.tokenX.decimals,
        decimals_y: p.tokenY.decimals,
        logo_x: p.tokenX.logoUri,
        logo_y: p.tokenY.logoUri,
        tvl: p.tvl,
        fee_rate: p.feeRate,
        extras: JSON.stringify(p.extras),
        synced_at: syncedAt,
      }));
      // A venue may list a pool twice across pages; keep one row per address.
      const unique = [...new Map(rows.map((r) => [r.address, r])).values()];
      await trx.insertInto('pools').values(unique)
        .onConflict((oc) => oc.columns(['venue', 'address']).doUpdateSet((eb) => ({
          mint_x: eb.ref('excluded.mint_x'),
          mint_y: eb.ref('excluded.mint_y'),
          symbol_x: eb.ref('excluded.symbol_x'),
          symbol_y: eb.ref('excluded.symbol_y'),
          decimals_x: eb.ref('excluded.decimals_x'),
          decimals_y: eb.ref('excluded.decimals_y'),
          logo_x: eb.ref('excluded.logo_x'),
          logo_y: eb.ref('excluded.logo_y'),
          tvl: eb.ref('excluded.tvl'),
          fee_rate: eb.ref('excluded.fee_rate'),
          extras: eb.ref('excluded.extras'),
          synced_at: eb.ref('excluded.synced_at'),
        })))
        .execute();
    }
    await trx.deleteFrom('pools').where('venue', '=', venue).where('synced_at', '<', syncedAt).execute();
  });
}

type Eb = ExpressionBuilder<Database, 'pools'>;

function sideMatches(eb: Eb, side: 'x' | 'y', term: string): Expression<SqlBool> {
  const mint = side === 'x' ? 'mint_x' : 'mint_y';
  const symbol = side === 'x' ? 'symbol_x' : 'symbol_y';
  return eb.or([eb(mint, '=', term), eb(sql<string>`upper(${sql.ref(symbol)})`, '=', term.toUpperCase())]);
}

/**
 * Pools matching a query's terms: one term matches a mint or symbol on either side, or a
 * pool address; two terms ("SOL-USDC") match one on each side, in either order.
 */
export async function findPools(db: Db, terms: readonly string[], venues: readonly Venue[], max: number): Promise<VenuePool[]> {
  const [a, b] = terms;
  if (a === undefined || venues.length === 0) return [];
  const rows = await db.selectFrom('pools').selectAll()
    .where('venue', 'in', venues)
    .where((eb) => (b === undefined
      ? eb.or([eb('address', '=', a), sideMatches(eb, 'x', a), sideMatches(eb, 'y', a)])
      : eb.or([
        eb.and([sideMatches(eb, 'x', a), sideMatches(eb, 'y', b)]),
        eb.and([sideMatches(eb, 'x', b), sideMatches(eb, 'y', a)]),
      ])))
    .orderBy(sql`tvl DESC NULLS LAST`)
    .limit(max)
    .execute();
  return rows.map((r) => ({
    venue: r.venue as Venue,
    address: r.address,
    tokenX: { mint: r.mint_x, symbol: r.symbol_x, decimals: r.decimals_x, logoUri: r.logo_x },
    tokenY: { mint: r.mint_y, symbol: r.symbol_y, decimals: r.decimals_y, logoUri: r.logo_y },
    tvl: r.tvl,
    feeRate: r.fee_rate,
    extras: r.extras,
  }));
}
