import type { ColumnType } from 'kysely';

export interface GatewayApiKeysTable {
  /** the key's public prefix, e.g. ak_3f9c0d2e1a7b4c5d */
  id: string;
  /** the gateway account the key acts for */
  gateway: string;
  /** hex SHA-256 of the whole key */
  key_hash: string;
  label: string | null;
  /**
   * the wallet whose gateway JWT created the key: the key works while that wallet is the
   * gateway's authority or signer; null for a key the administrator created
   */
  created_by: ColumnType<string | null, string | null | undefined, never>;
  created_at: ColumnType<Date, Date, never>;
  revoked_at: Date | null;
}

export interface ApiKeysTables {
  gateway_api_keys: GatewayApiKeysTable;
}
