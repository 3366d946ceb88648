/**
 * Reads of the policy read models (payment_policies, composable_policies): lists by the
 * resolved filters, one policy by address, the owner and mint of a user payment. Every
 * list is newest first (creation slot, then address) and leaves out deleted policies,
 * whose accounts are closed on chain; each filter combination has an index (migration
 * 0100). Lists answer the stored normalized policies (the `doc` column) joined into one
 * JSON array by Postgres, so the API node neither parses nor re-serializes them.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { queryCell, type JsonText } from '../../infra/postgres/text-query.js';
import { compileShaped } from '../../infra/postgres/compiled-shapes.js';
import type { PolicyRowTable } from '../../projections/policies/tables.js';
import { factsFromRow } from '../../projections/policies/doc.js';
import type { PolicyFacts, PolicyKind } from '../../src/kernel/domain/policy.js';
import type { PolicyFilter } from './filters.js';

export type StoredPolicy = Selectable<PolicyRowTable>;
export interface Page { limit: number; offset: number }

const TABLE = { payment: 'payment_policies', composable: 'composable_policies' } as const;

export function rowToFacts(kind: PolicyKind, r: StoredPolicy): PolicyFacts {
  return factsFromRow(kind, r);
}

/** The page of a list as one JSON array text (`[]` when empty), unexecuted: the bench hands its SQL to pgbench. */
export function policiesQuery(db: Db, kind: PolicyKind, f: PolicyFilter, page: Page) {
  let q = db.selectFrom(TABLE[kind]).select(['doc', 'created_slot', 'address'])
    // a literal predicate, so the partial indexes (WHERE NOT deleted) apply under generic plans too
    .where(sql<boolean>`NOT deleted`)
    .where('token_mint', '=', f.tokenMint);
  if (f.gateway !== undefined) q = q.where('gateway', '=', f.gateway);
  if (f.recipient !== undefined) q = q.where('recipient', '=', f.recipient);
  if (f.owner !== undefined) q = q.where('owner', '=', f.owner);
  for (const up of f.userPayments) q = q.where('user_payment', '=', up);
  if (f.memo !== undefined) q = q.where('memo', '=', f.memo);
  if (f.subscriptionsOnly) q = q.where('variant', '=', 'Subscription');
  const rows = q.orderBy('created_slot', 'desc').orderBy('address', 'desc').limit(page.limit).offset(page.offset);
  return db.selectFrom(rows.as('t'))
    .select(sql<string>`coalesce('[' || string_agg(t.doc, ',' ORDER BY t.created_slot DESC, t.address DESC) || ']', '[]')`.as('data'));
}

export async function listPolicyDocs(db: Db, kind: PolicyKind, f: PolicyFilter, page: Page): Promise<JsonText> {
  // every value of the filter and page is a parameter of policiesQuery (compiled-shapes.ts)
  return (await queryCell(db, compileShaped(`policies:${kind}`, { f, page }, (a) => policiesQuery(db, kind, a.f, a.page)))) ?? '[]';
}

/** The read model's row of a policy, deleted or not; undefined when it never saw one. */
export async function findPolicy(db: Db, kind: PolicyKind, address: string): Promise<StoredPolicy | undefined> {
  return db.selectFrom(TABLE[kind]).selectAll().where('address', '=', address).executeTakeFirst();
}

/** Owner and mint of a user payment, from the user payments read model. */
export async function findUserPayment(db: Db, address: string): Promise<{ owner: string; token_mint: string } | undefined> {
  return db.selectFrom('user_payments').select(['owner', 'token_mint']).where('address', '=', address).executeTakeFirst();
}
