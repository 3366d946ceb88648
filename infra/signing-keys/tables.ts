import type { ColumnType } from 'kysely';

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  private_jwk: string | null;
  created_at: ColumnType<Date, Date, Date>;
  retires_at: ColumnType<Date | null, Date | null, Date | null>;
}

export interface KeysTables {
  signing_keys: SigningKeysTable;
}
