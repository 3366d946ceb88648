/**
 * GET /v1/me/payments: the wallet's payments (PaymentRecords of its payment policies,
 * deleted ones included), newest first, paged. Read through the policies' owner index
 * and the payments' policy index.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { PayerPayment } from '../../src/kernel/wire/answers/payer.js';
import { display, type DecimalsOf } from './decimals.js';

// the answer's shape is the wire module's, which the account page reads as well
export type { PayerPayment } from '../../src/kernel/wire/answers/payer.js';

interface Row {
  signature: string; slot: string; at: string; policy: string; gateway: string; recipient: string;
  token_mint: string | null; amount: string; record_id: string; tracking_id: string | null;
}

export async function listPayments(db: Db, decimalsOf: DecimalsOf, wallet: string, page: { limit: number; offset: number }): Promise<PayerPayment[]> {
  const rows = (await sql<Row>`
    SELECT signature, slot::text AS slot, at::text AS at, policy, gateway, recipient, token_mint, amount::text AS amount,
           record_id::text AS record_id, tracking_id
    FROM payments
    WHERE policy IN (SELECT address FROM payment_policies WHERE owner = ${wallet}) AND kind = 'PaymentRecord'
    ORDER BY slot DESC, record_id DESC, event_id DESC LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db)).rows;
  const out: PayerPayment[] = [];
  for (const r of rows) {
    const decimals = await decimalsOf(r.token_mint);
    out.push({
      signature: r.signature, slot: Number(r.slot), at: Number(r.at), policy: r.policy, gateway: r.gateway, merchant: r.recipient,
      tokenMint: r.token_mint, decimals: decimals ?? null, amount: r.amount, amountDisplay: display(r.amount, decimals),
      recordId: Number(r.record_id), trackingId: r.tracking_id,
    });
  }
  return out;
}
