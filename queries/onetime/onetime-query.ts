/**
 * One-time payments by tracking id: the OneTime payment policies whose 64-byte memo is
 * the tracking id's encoding, optionally for one recipient, newest first. A policy
 * carries the payment's outcome (status Completed, totalPaid, lastPaymentAt and its
 * signature), so one record answers "was this checkout paid". Closed (deleted) policies
 * are left out, as on every policy list.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { compileShaped } from '../../infra/postgres/compiled-shapes.js';
import type { Page } from '../policies/policy-rows.js';

/**
 * SPEC: data is one object when exactly one record matches, otherwise an array. The shape
 * follows the number of matching records, not the size of the page.
 */
export type OneTimeAnswer = { kind: 'one'; doc: string } | { kind: 'many'; docs: string[] };

/** The matching records, newest first, unpaged: the bench hands its SQL to pgbench. */
export function oneTimeQuery(db: Db, memo: Buffer, recipient: string | undefined) {
  let q = db.selectFrom('payment_policies').select('doc')
    .where(sql<boolean>`NOT deleted`)
    .where('memo', '=', memo)
    .where('variant', '=', 'OneTime')
    .where('doc', 'is not', null);
  if (recipient !== undefined) q = q.where('recipient', '=', recipient);
  return q.orderBy('created_slot', 'desc').orderBy('address', 'desc');
}

/**
 * The stored normalized policies (JSON text) of the matching records. Two rows at most
 * tell one match from several; almost every tracking id has zero or one, answered by that
 * single query. Only several matches are paged.
 */
export async function listOneTime(db: Db, memo: Buffer, recipient: string | undefined, page: Page): Promise<OneTimeAnswer> {
  // memo, recipient and the page are parameters only (compiled-shapes.ts)
  const paged = (p: Page) => db.executeQuery(compileShaped('onetime', { memo, recipient, p }, (a) => oneTimeQuery(db, a.memo, a.recipient).limit(a.p.limit).offset(a.p.offset)));
  const { rows: firstTwo } = await paged({ limit: 2, offset: 0 });
  if (firstTwo.length === 1) return { kind: 'one', doc: firstTwo[0]!.doc ?? 'null' };
  if (firstTwo.length === 0) return { kind: 'many', docs: [] };
  const { rows } = await paged(page);
  return { kind: 'many', docs: rows.map((r) => r.doc ?? 'null') };
}
