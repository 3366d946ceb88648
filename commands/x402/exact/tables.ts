import type { ColumnType } from 'kysely';

export interface X402FeePayersTable {
  address: string;
  /** CAIP-2 network the key pays fees on */
  network: string;
  /** the sealed 64-byte secret key (base58); kept after retirement (the key may still hold SOL) */
  secret: string | null;
  created_at: ColumnType<Date, Date, Date>;
  /** null while active; a rotated-out key co-signs until then */
  retires_at: ColumnType<Date | null, Date | null, Date | null>;
}

export type ExactSettlementState = 'sending' | 'settled' | 'failed';

export interface X402ExactSettlementsTable {
  /** sha256 of the transaction message, base64 (the @x402/svm facilitator's key) */
  message_hash: string;
  state: ExactSettlementState;
  signature: string | null;
  network: string;
  gateway: string;
  fee_payer: string;
  payer: string;
  pay_to: string;
  asset: string;
  amount: ColumnType<string, string, string>;
  resource: string | null;
  memo: string | null;
  /** the SettleResponse answered, once settled */
  answer: ColumnType<unknown, string | null, string | null>;
  created_at: ColumnType<Date, Date, Date>;
  settled_at: ColumnType<Date | null, Date | null, Date | null>;
  /** when a route of this service served the payment's one request (exact-pay.ts) */
  served_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface X402ExactTables {
  x402_fee_payers: X402FeePayersTable;
  x402_exact_settlements: X402ExactSettlementsTable;
}
