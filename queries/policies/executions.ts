/**
 * Executions of a policy, newest first: PaymentRecord events of a payment policy,
 * ComposableExecuted events of a composable policy, read from the payments model, each
 * as stored by the projection (projections/payments/doc.ts: the events API's shape plus
 * the policy's trackingId), joined into one JSON array by Postgres. Order: slot, then
 * record id (the policy's payment count), both descending, so pages are stable.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { queryCell, type JsonText } from '../../infra/postgres/text-query.js';
import { compileShaped } from '../../infra/postgres/compiled-shapes.js';
import type { PolicyKind } from '../../src/kernel/domain/policy.js';
import { typedEventSchema } from '../events/event-schema.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import type { Page } from './policy-rows.js';

const EVENT = { payment: 'PaymentRecord', composable: 'ComposableExecuted' } as const;

/** The page as one JSON array text, unexecuted: the bench hands its SQL to pgbench. */
export function executionsQuery(db: Db, kind: PolicyKind, policy: string, page: Page) {
  const rows = db.selectFrom('payments').select(['doc', 'slot', 'record_id', 'event_id'])
    .where('policy', '=', policy).where('kind', '=', EVENT[kind])
    .orderBy('slot', 'desc').orderBy('record_id', 'desc').orderBy('event_id', 'desc')
    .limit(page.limit).offset(page.offset);
  return db.selectFrom(rows.as('t'))
    .select(sql<string>`coalesce('[' || string_agg(t.doc, ',' ORDER BY t.slot DESC, t.record_id DESC, t.event_id DESC) || ']', '[]')`.as('data'));
}

export async function listExecutionDocs(db: Db, kind: PolicyKind, policy: string, page: Page): Promise<JsonText> {
  return (await queryCell(db, compileShaped(`executions:${kind}`, { policy, page }, (a) => executionsQuery(db, kind, a.policy, a.page)))) ?? '[]';
}

export function executionSchema(kind: PolicyKind): JsonSchema {
  const base = typedEventSchema(EVENT[kind]);
  return {
    ...base,
    properties: {
      ...(base['properties'] as Record<string, JsonSchema>),
      trackingId: { type: 'string', nullable: true, description: 'the policy\'s memo as UTF-8 (its tracking id)' },
    },
  };
}
