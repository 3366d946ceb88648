/**
 * Payments: one row per PaymentRecord and per ComposableExecuted, with the trackingId of
 * the policy's memo. A PaymentRecord carries its memo; a ComposableExecuted does not, so
 * this model remembers each composable policy's 32-byte memo from its creation event (in
 * a table of its own, never another model's) and fills executions seen before it.
 */
import { pgText } from '../../src/kernel/domain/event-data.js';
import { COMPOSABLE_MEMO_BYTES, memoFromData, memoToTrackingId } from '../../src/kernel/domain/memo.js';
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { Projection, Trx } from '../runner/projection.js';
import { paymentDoc, type PaymentRowLike } from './doc.js';
import { PAYMENTS_GROUP } from '../../src/kernel/names/index.js';
import { sql } from 'kysely';
import { bulkAppendLines, bulkInsert } from '../runner/bulk.js';
import { composableLine, paymentRecordLine, type PolicyMemo } from './copy-line.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

type Memo = PolicyMemo;

const CHUNK = 1000;

/** the payments table's columns, in the order of a COPY line (copy-line.ts) */
export const PAYMENT_COLUMNS: readonly string[] = [
  'event_id', 'kind', 'policy', 'gateway', 'signature', 'slot', 'event_index', 'block_time', 'timestamp', 'at', 'amount',
  'output_amount', 'gateway_fee', 'protocol_fee', 'payer', 'recipient', 'token_mint', 'target_program', 'record_id', 'memo',
  'tracking_id', 'doc',
];
const MEMO_COLUMNS: readonly string[] = [
  'composable_policy', 'memo', 'tracking_id', 'input_mint',
];

// the row object itself takes its doc (one is rendered per payment written: no second copy of the row)
const withDoc = <T extends PaymentRowLike>(r: T): T & { doc: string } => Object.assign(r, { doc: paymentDoc(r) });

function memoOfCreated(e: TributaryEvent<'ComposablePolicyCreated'>): Memo {
  const memo = memoFromData(e.data, COMPOSABLE_MEMO_BYTES);
  const fc = e.data.forward_config as { input_mint?: unknown };
  return { memo, tracking_id: pgText(memoToTrackingId(memo)), input_mint: typeof fc.input_mint === 'string' ? fc.input_mint : null };
}

async function loadMemos(trx: Trx, policies: readonly string[]): Promise<Map<string, Memo>> {
  const out = new Map<string, Memo>();
  for (let i = 0; i < policies.length; i += CHUNK) {
    const rows = await trx.selectFrom('payment_composable_memos').selectAll()
      .where('composable_policy', 'in', policies.slice(i, i + CHUNK)).execute();
    for (const r of rows) out.set(r.composable_policy, { memo: r.memo, tracking_id: r.tracking_id, input_mint: r.input_mint });
  }
  return out;
}

/** An execution of the batch with what its row needs besides the event: the composable policy's memo as it stood at that point of the batch. */
type Planned = { e: TributaryEvent<'PaymentRecord'> } | { e: TributaryEvent<'ComposableExecuted'>; memo: Memo | undefined };

/** The row of an execution as a line of COPY text (copy-line.ts: the row paymentRow or composableRow builds, rendered at once). */
function plannedLine(p: Planned): string {
  return 'memo' in p ? composableLine(p.e, p.memo) : paymentRecordLine(p.e);
}

/** The keys of a payment row: its policy's executions, its gateway's stats (their partial days). */
function scopesOf(scopes: Set<string>, r: { policy: string; gateway: string }): void {
  scopes.add(readScope.policy(r.policy));
  scopes.add(readScope.gateway(r.gateway));
}

const policyOf = (p: Planned): string => ('memo' in p ? p.e.data.composable_policy : p.e.data.payment_policy);

async function apply(trx: Trx, events: readonly TributaryEvent[]): Promise<ReadonlySet<string>> {
  const executedPolicies = [...new Set(events.flatMap((e) => (e.name === 'ComposableExecuted' ? [e.data.composable_policy] : [])))];
  const memos = executedPolicies.length > 0 ? await loadMemos(trx, executedPolicies) : new Map<string, Memo>();
  const planned: Planned[] = [];
  const created: { composable_policy: string; memo: Buffer; tracking_id: string; input_mint: string | null }[] = [];
  for (const e of events) {
    switch (e.name) {
      case 'PaymentRecord': planned.push({ e }); break;
      case 'ComposableExecuted': planned.push({ e, memo: memos.get(e.data.composable_policy) }); break;
      case 'ComposablePolicyCreated': {
        const m = memoOfCreated(e);
        const policy = e.data.composable_policy;
        memos.set(policy, m);
        created.push({ composable_policy: policy, ...m });
        break;
      }
      case 'ComposablePolicyDeleted': case 'ComposablePolicyStatusChanged': case 'EmergencyPauseChanged': case 'GatewayFeeBpsChanged':
      case 'GatewayFeeRecipientChanged': case 'GatewaySignerChanged': case 'PaymentGatewayCreated': case 'PaymentGatewayDeleted':
      case 'PaymentPolicyCreated': case 'PaymentPolicyDeleted': case 'PaymentPolicyStatusChanged': case 'ProgramAuthorityChanged':
      case 'ProgramConfigCreated': case 'ReferralRewardDistributedRecord': case 'UserPaymentCreated': case 'UserPaymentDeleted':
        break;
      default: assertNever(e);
    }
  }
  // rows rendered as the COPY stream takes them (bulk.ts): the server writes one chunk while the next is rendered
  await bulkAppendLines(trx, 'payments', PAYMENT_COLUMNS, planned, plannedLine, sql`ON CONFLICT (event_id) DO NOTHING`);
  // the batch's distinct policies and gateways first: a key string per row is garbage the
  // size of the batch for a few dozen keys
  const policies = new Set<string>();
  const gateways = new Set<string>();
  for (const p of planned) { policies.add(policyOf(p)); gateways.add(p.e.data.gateway); }
  const scopes = new Set<string>();
  for (const policy of policies) scopes.add(readScope.policy(policy));
  for (const gateway of gateways) scopes.add(readScope.gateway(gateway));
  if (created.length > 0) for (const r of await rememberCreated(trx, created)) scopesOf(scopes, r);
  return scopes;
}

/** A composable execution still waiting for its policy's memo: payments_unfilled_idx's predicate. */
const UNFILLED = sql<boolean>`kind = 'ComposableExecuted' AND memo IS NULL`;

/**
 * The memos of the policies this batch created, and executions indexed before their
 * policy's creation (a stream out of chain order) filled with the first creation's memo,
 * as applying the creations one by one in batch order would.
 */
async function rememberCreated(trx: Trx, created: readonly (Memo & { composable_policy: string })[]): Promise<readonly { policy: string; gateway: string }[]> {
  const last = new Map(created.map((c) => [c.composable_policy, c]));
  const first = new Map([...created].reverse().map((c) => [c.composable_policy, c]));
  await bulkInsert(trx, 'payment_composable_memos', MEMO_COLUMNS, [...last.values()], sql`
    ON CONFLICT (composable_policy) DO UPDATE SET memo = EXCLUDED.memo, tracking_id = EXCLUDED.tracking_id, input_mint = EXCLUDED.input_mint`);
  // through payments_unfilled_idx (migration 1002), whose predicate is spelt out so the
  // planner can prove it, and so is every row's update: a replay builds the primary key last
  const early = await trx.selectFrom('payments').selectAll()
    .where('policy', 'in', [...first.keys()]).where(UNFILLED).execute();
  for (const r of early) {
    const c = first.get(r.policy)!;
    const filled = withDoc({ ...r, memo: c.memo, tracking_id: c.tracking_id, token_mint: r.token_mint ?? c.input_mint });
    await trx.updateTable('payments').set({ memo: filled.memo, tracking_id: filled.tracking_id, token_mint: filled.token_mint, doc: filled.doc })
      .where('policy', '=', r.policy).where(UNFILLED).where('event_id', '=', r.event_id).execute();
  }
  return early;
}

export const paymentsProjection: Projection = {
  name: PAYMENTS_GROUP,
  tables: [
    { name: 'payment_composable_memos', orderBy: 'composable_policy' },
    // apply reads payments only through payments_unfilled_idx (executions seen before their
    // policy's creation); a replay writes each archived event's row once under its id,
    // unique in the archive, so it needs the primary key neither to refuse a duplicate nor
    // for ON CONFLICT (bulkAppendLines falls back to it only on a duplicate)
    {
      name: 'payments', orderBy: 'event_id',
      deferredIndexes: ['payments_pkey', 'payments_policy_idx', 'payments_gateway_at_idx', 'payments_at_idx', 'payments_memo_idx'],
    },
  ],
  // a payment row is keyed by its event id and written ON CONFLICT DO NOTHING (apply): its
  // events need no dedup set; a policy's creation, which moves its memo, does
  absorbs: { names: ['PaymentRecord', 'ComposableExecuted'], table: 'payments', idColumn: 'event_id' },
  replayable: true,
  apply,
};
