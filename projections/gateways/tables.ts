import type { ColumnType } from 'kysely';

type Seconds = ColumnType<string | null, string | number | null, string | number | null>;

export interface GatewaysTable {
  /** PDA("gateway", authority) */
  address: string;
  authority: string;
  fee_recipient: string;
  /** the key that signs scheduled payments; the authority until GatewaySignerChanged */
  signer: string;
  fee_bps: number;
  name: string;
  url: string;
  /** false once deleted (the IDL has no event that deactivates a gateway otherwise) */
  active: boolean;
  deleted: boolean;
  created_at: Seconds;
  updated_at: Seconds;
  deleted_at: Seconds;
  created_slot: ColumnType<string, string | number, string | number>;
  created_signature: string;
}

export interface GatewaysTables {
  gateways: GatewaysTable;
}
