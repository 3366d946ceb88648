import type { ColumnType } from 'kysely';

type Seconds = ColumnType<string | null, string | number | null, string | number | null>;

export interface UserPaymentsTable {
  /** PDA("user_payment", owner, token_mint) */
  address: string;
  owner: string;
  token_mint: string;
  token_account: string;
  /** false once deleted (the account is closed) */
  active: boolean;
  created_at: Seconds;
  updated_at: Seconds;
  deleted_at: Seconds;
  created_slot: ColumnType<string, string | number, string | number>;
  created_signature: string;
}

export interface UserPaymentsTables {
  user_payments: UserPaymentsTable;
}
