import type { ColumnType } from 'kysely';

type Big = ColumnType<string, string | number, string | number>;
type OptBig = ColumnType<string | null, string | number | null, string | number | null>;

export interface PaymentsTable {
  event_id: string;
  /** PaymentRecord | ComposableExecuted */
  kind: string;
  /** payment policy or composable policy address */
  policy: string;
  gateway: string;
  signature: string;
  slot: Big;
  event_index: number;
  block_time: OptBig;
  /** the program's clock at the payment */
  timestamp: Big;
  /** block time, or the program's clock when the cluster reported none: the stats' time basis */
  at: Big;
  /** amount (PaymentRecord) or input amount (ComposableExecuted) */
  amount: Big;
  output_amount: OptBig;
  gateway_fee: OptBig;
  protocol_fee: OptBig;
  payer: string | null;
  recipient: string;
  token_mint: string | null;
  target_program: string | null;
  record_id: Big;
  memo: Buffer | null;
  tracking_id: string | null;
  /** the API event (./doc.ts: paymentDoc) as JSON text; rows without it are left out of executions */
  doc: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PaymentComposableMemosTable {
  composable_policy: string;
  memo: Buffer;
  tracking_id: string;
  input_mint: string | null;
}

export interface PaymentsTables {
  payments: PaymentsTable;
  payment_composable_memos: PaymentComposableMemosTable;
}
