/**
 * One-time payments by tracking id: the OneTime payment policies whose 64-byte memo is
 * the tracking id's encoding, optionally for one recipient, newest first. A policy
 * carries the payment's outcome (status Completed, totalPaid, lastPaymentAt and its
 * signature), so one record answers "was this checkout paid". Closed (deleted) policies
 * are left out, as on every policy list.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Page } from '../policies/policy-rows.js';

/** The stored normalized policies (JSON text) of the matching records. */
export async function listOneTime(db: Db, memo: Buffer, recipient: string | undefined, page: Page): Promise<string[]> {
  let q = db.selectFrom('payment_policies').select('doc')
    .where(sql<boolean>`NOT deleted`)
    .where('memo', '=', memo)
    .where('variant', '=', 'OneTime')
    .where('doc', 'is not', null);
  if (recipient !== undefined) q = q.where('recipient', '=', recipient);
  const rows = await q.orderBy('created_slot', 'desc').orderBy('address', 'desc').limit(page.limit).offset(page.offset).execute();
  return rows.map((r) => r.doc ?? 'null');
}
