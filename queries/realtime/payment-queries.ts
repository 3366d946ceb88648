/**
 * The reads of the real-time layer: catch-up from the payments read model, and the
 * composable policies behind ComposableExecuted events (their trackingId, payer, mint).
 * Lookups by trackingId go through its memo bytes (the indexed column), as the events
 * API does, and compare the text too.
 */
import type { Db } from '../../infra/postgres/database.js';
import { COMPOSABLE_MEMO_BYTES, PAYMENT_MEMO_BYTES, trackingIdToMemo } from '../../src/kernel/domain/memo.js';
import type { ComposableRef, PaymentData } from './notification.js';
import type { Since } from './since.js';

export interface CatchUpRow { eventId: string; data: PaymentData }

function memosOf(trackingId: string): Buffer[] {
  return [PAYMENT_MEMO_BYTES, COMPOSABLE_MEMO_BYTES]
    .map((size) => trackingIdToMemo(trackingId, size))
    .filter((m): m is Buffer => m !== undefined);
}

/** The slot of a signature: among this trackingId's payments first, else in the archive. */
export async function slotOfSignature(db: Db, trackingId: string, signature: string): Promise<number | undefined> {
  const own = await db.selectFrom('payments').select('slot')
    .where('memo', 'in', memosOf(trackingId)).where('signature', '=', signature)
    .orderBy('slot').limit(1).executeTakeFirst();
  if (own) return Number(own.slot);
  const any = await db.selectFrom('events').select('slot').where('signature', '=', signature).limit(1).executeTakeFirst();
  return any ? Number(any.slot) : undefined;
}

/**
 * Payments of a trackingId from a point on, oldest first: at or after a time (second
 * precision), or in the slot of a signature and after it (the signature's own payments
 * left out; a slot does not order its transactions, so its others are all sent).
 */
export async function paymentsSince(
  db: Db, trackingId: string, since: Since, sinceSlot: number | undefined, limit: number, status: string,
): Promise<CatchUpRow[]> {
  let q = db.selectFrom('payments as p')
    .leftJoin('composable_policies as cp', (j) => j.onRef('cp.address', '=', 'p.policy').on('p.kind', '=', 'ComposableExecuted'))
    .select(['p.event_id', 'p.signature', 'p.slot', 'p.event_index', 'p.amount', 'p.token_mint', 'p.policy', 'p.gateway',
      'p.payer', 'p.recipient', 'p.record_id', 'p.timestamp', 'cp.owner as cp_owner', 'cp.token_mint as cp_mint'])
    .where('p.memo', 'in', memosOf(trackingId))
    .where('p.tracking_id', '=', trackingId);
  if (since.kind === 'time') q = q.where('p.at', '>=', String(since.seconds));
  else q = q.where('p.slot', '>=', String(sinceSlot ?? 0)).where('p.signature', '<>', since.signature);
  const rows = await q.orderBy('p.slot').orderBy('p.signature').orderBy('p.event_index').limit(limit).execute();
  return rows.map((r) => ({
    eventId: r.event_id,
    data: {
      trackingId,
      signature: r.signature,
      slot: Number(r.slot),
      amount: r.amount,
      tokenMint: r.token_mint ?? r.cp_mint ?? null,
      policyAddress: r.policy,
      gateway: r.gateway,
      payer: r.payer ?? r.cp_owner ?? null,
      recipient: r.recipient,
      recordId: Number(r.record_id),
      timestamp: Number(r.timestamp),
      status,
    },
  }));
}

/** Composable policies by address: the composable read model, else the payments model's own memo copy. */
export async function composablePolicies(db: Db, addresses: readonly string[]): Promise<Map<string, ComposableRef>> {
  const out = new Map<string, ComposableRef>();
  if (addresses.length === 0) return out;
  const rows = await db.selectFrom('composable_policies').select(['address', 'tracking_id', 'owner', 'token_mint'])
    .where('address', 'in', addresses).execute();
  for (const r of rows) out.set(r.address, { trackingId: r.tracking_id, owner: r.owner, tokenMint: r.token_mint });
  const missing = addresses.filter((a) => !out.has(a));
  if (missing.length > 0) {
    const memos = await db.selectFrom('payment_composable_memos').select(['composable_policy', 'tracking_id', 'input_mint'])
      .where('composable_policy', 'in', missing).execute();
    for (const m of memos) out.set(m.composable_policy, { trackingId: m.tracking_id, owner: null, tokenMint: m.input_mint });
  }
  return out;
}
