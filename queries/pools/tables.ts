/** The `pools` table (migration 0300), written by the pool sync worker, read by pool search. */
import type { ColumnType, JSONColumnType } from 'kysely';

export interface PoolsTable {
  venue: string;
  address: string;
  mint_x: string;
  mint_y: string;
  symbol_x: string | null;
  symbol_y: string | null;
  decimals_x: number | null;
  decimals_y: number | null;
  logo_x: string | null;
  logo_y: string | null;
  tvl: number | null;
  fee_rate: number | null;
  extras: JSONColumnType<Record<string, unknown>, string, string>;
  synced_at: ColumnType<Date, Date, Date>;
}

export interface PoolTables {
  pools: PoolsTable;
}
