import type { ColumnType } from 'kysely';

export interface GatewayApiKeysTable {
  /** the key's public prefix, e.g. ak_3f9c0d2e1a7b4c5d */
  id: string;
  /** the gateway account the key acts for */
  gateway: string;
  /** hex SHA-256 of the whole key */
  key_hash: string;
  label: string | null;
  created_at: ColumnType<Date, Date, never>;
  revoked_at: Date | null;
}

export interface ApiKeysTables {
  gateway_api_keys: GatewayApiKeysTable;
}
