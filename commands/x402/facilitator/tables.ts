import type { ColumnType, Generated, JSONColumnType } from 'kysely';

export interface X402ResourcesTable {
  id: Generated<string>;
  /** the gateway account that registered it (its requirements are under this gateway) */
  gateway: string;
  /** the normalized URL (resource-url.ts); unique per gateway, not across gateways */
  resource: string;
  /** the URL's origin, whose proof of control (x402_origin_proofs) lists it */
  origin: Generated<string>;
  /** "http" */
  type: string;
  description: string | null;
  /** the `accepts` entries, as a 402 answer lists them */
  accepts: JSONColumnType<unknown[]>;
  /** input and output descriptions */
  metadata: JSONColumnType<Record<string, unknown>>;
  discoverable: boolean;
  /** the one row per URL discovery shows: its gateway proved control of the origin */
  listed: Generated<boolean>;
  updated_at: ColumnType<Date, Date, Date>;
}

/** A gateway's token for an origin, and when the origin was found serving it. */
export interface X402OriginProofsTable {
  gateway: string;
  origin: string;
  token: string;
  created_at: ColumnType<Date, Date, never>;
  verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface X402ResourceTables {
  x402_resources: X402ResourcesTable;
  x402_origin_proofs: X402OriginProofsTable;
}
