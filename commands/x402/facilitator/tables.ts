import type { ColumnType, Generated, JSONColumnType } from 'kysely';

export interface X402ResourcesTable {
  id: Generated<string>;
  /** the gateway account that registered it (its requirements are under this gateway) */
  gateway: string;
  resource: string;
  /** "http" */
  type: string;
  description: string | null;
  /** the `accepts` entries, as a 402 answer lists them */
  accepts: JSONColumnType<unknown[]>;
  /** input and output descriptions */
  metadata: JSONColumnType<Record<string, unknown>>;
  discoverable: boolean;
  updated_at: ColumnType<Date, Date, Date>;
}

export interface X402ResourceTables {
  x402_resources: X402ResourcesTable;
}
