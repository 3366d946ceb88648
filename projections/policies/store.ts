/**
 * Loading the rows a batch touches and saving what the fold changed: one SELECT per
 * table and one multi-row upsert per table per batch, whatever the batch size.
 */
import type { Selectable } from 'kysely';
import type { Trx } from '../runner/projection.js';
import type { FoldResult, FoldState, HistoryRow, Owner, PolicyKindSpec, PolicyRow } from './fold.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { PolicyStatus } from '../../src/kernel/domain/policy-type.js';
import type { PolicyRowTable } from './tables.js';
import { policyDoc } from './doc.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

const CHUNK = 1000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

function fromDb(r: Selectable<PolicyRowTable>): PolicyRow {
  const { doc: _doc, ...row } = r;
  return { ...row, policy_type: r.policy_type as unknown as PolicyType, status: r.status as PolicyStatus };
}

export async function loadState(trx: Trx, spec: PolicyKindSpec, addresses: readonly string[], userPayments: readonly string[]): Promise<FoldState> {
  const state: FoldState = { policies: new Map(), owners: new Map() };
  for (const part of chunks(addresses)) {
    const rows = await trx.selectFrom(spec.tables.policies).selectAll().where('address', 'in', part).execute();
    for (const r of rows) state.policies.set(r.address, fromDb(r));
  }
  for (const part of chunks(userPayments)) {
    const rows = await trx.selectFrom(spec.tables.owners).selectAll().where('user_payment', 'in', part).execute();
    for (const r of rows) state.owners.set(r.user_payment, { owner: r.owner, token_mint: r.token_mint });
  }
  return state;
}

const dbRow = (spec: PolicyKindSpec, r: PolicyRow) => ({
  ...r,
  policy_type: JSON.stringify(r.policy_type),
  extra: r.extra === null ? null : JSON.stringify(r.extra),
  doc: policyDoc(spec.kind, r),
});

/** The keys of a policy row's lists (src/kernel/names/read-scopes.ts): its gateway's, its recipient's, its memo's. */
export function addPolicyScopes(scopes: Set<string>, r: Pick<PolicyRow, 'gateway' | 'recipient' | 'memo'>): void {
  scopes.add(readScope.gateway(r.gateway));
  scopes.add(readScope.recipient(r.recipient));
  scopes.add(readScope.memo(r.memo));
}

async function upsert(trx: Trx, spec: PolicyKindSpec, rows: readonly PolicyRow[], scopes: Set<string>): Promise<void> {
  for (const r of rows) addPolicyScopes(scopes, r);
  for (const part of chunks(rows.map((r) => dbRow(spec, r)))) {
    await trx.insertInto(spec.tables.policies).values(part)
      .onConflict((oc) => oc.column('address').doUpdateSet((eb) => Object.fromEntries(POLICY_COLUMNS.map((c) => [c, eb.ref(`excluded.${c}`)]))))
      .execute();
  }
}

const POLICY_COLUMNS = [
  'policy_id', 'user_payment', 'owner', 'token_mint', 'gateway', 'recipient', 'variant', 'policy_type', 'memo', 'tracking_id',
  'status', 'total_paid', 'total_output', 'extra', 'payment_count', 'last_payment_at', 'last_payment_signature',
  'next_payment_due', 'created_at', 'updated_at', 'created_slot', 'created_signature', 'deleted', 'deleted_at', 'doc',
] as const;

/** Saves the fold's changes; adds to `scopes` the keys of every policy row it wrote. */
export async function saveState(trx: Trx, spec: PolicyKindSpec, state: FoldState, result: FoldResult, scopes: Set<string>): Promise<void> {
  await upsert(trx, spec, [...result.dirty].map((a) => state.policies.get(a)).filter((r): r is PolicyRow => r !== undefined), scopes);
  for (const part of chunks<HistoryRow>(result.history)) {
    await trx.insertInto(spec.tables.history).values(part).onConflict((oc) => oc.columns(['policy', 'event_id']).doNothing()).execute();
  }
  const owners = [...result.newOwners].map(([user_payment, o]: [string, Owner]) => ({ user_payment, ...o }));
  for (const part of chunks(owners)) {
    await trx.insertInto(spec.tables.owners).values(part).onConflict((oc) => oc.column('user_payment').doNothing()).execute();
    // policies created before their user payment was seen (a stream out of chain order)
    // and not in this batch: their owner, mint and rendered answer change
    const stale = await trx.selectFrom(spec.tables.policies).selectAll()
      .where('user_payment', 'in', part.map((o) => o.user_payment)).where('owner', 'is', null).execute();
    const byUp = new Map(part.map((o) => [o.user_payment, o]));
    await upsert(trx, spec, stale.map((r) => ({ ...fromDb(r), owner: byUp.get(r.user_payment)!.owner, token_mint: byUp.get(r.user_payment)!.token_mint })), scopes);
  }
}
