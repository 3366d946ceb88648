/**
 * Pauses and resumes of the served gateways' policies (PaymentPolicyStatusChanged, as
 * the policies read model keeps it in payment_policy_status_history): a resume makes the
 * policy's parked intents due again (intents.ts, unpark), since the chain does not move a
 * paused subscription's next_payment_due and that period is still owed; and each change is
 * announced once to the merchant as subscription.paused / subscription.resumed (webhooks
 * and the trackingId's room, lifecycle-events.ts), keyed by the transaction that made it.
 *
 * Rows are read by slot from a cursor that starts REWIND_SLOTS behind the newest change
 * when the process starts (no flood of old changes) and always rereads REWIND_SLOTS back,
 * so a row the projector writes late is still seen; the event keys keep it to once. A
 * resume the read model never shows is still found by the chain sweep (sweep.ts).
 *
 * The program lets only a policy's owner change its status or delete it (PROGRAM.md), so
 * every such change is the payer's own: the events say `by: "payer"`. A deletion
 * (PaymentPolicyDeleted, from the events table by slot, on a cursor of its own) is
 * announced as subscription.canceled, `by: "payer"`, `reason: "deleted"`.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { announce, type LifecycleDeps } from './lifecycle-events.js';
import { unpark } from './intents.js';

/** about an hour of 400 ms slots */
const REWIND_SLOTS = 10_000n;
const LIMIT = 1000;

export const statusEventKey = (name: 'subscription.paused' | 'subscription.resumed', policy: string, signature: string): string =>
  `${name}:${policy}:${signature}`;

/** not `subscription.canceled:<policy>:<due>`, the dunning's give-up */
export const deletionEventKey = (policy: string, signature: string): string => `subscription.canceled:${policy}:deleted:${signature}`;

interface Change {
  policy: string; new_status: string; old_status: string | null; slot: string; signature: string; gateway: string; tracking_id: string; variant: string;
  due: string | null; status: string;
}

export interface StatusWatch { run(): Promise<number> }

export function watchStatusChanges(db: Db, lifecycle: LifecycleDeps): StatusWatch {
  let cursor: bigint | undefined;
  const deletions = watchDeletions(db, lifecycle);
  return {
    async run() {
      const canceled = await deletions.run();
      if (cursor === undefined) {
        const top = await sql<{ slot: string | null }>`SELECT max(slot)::text AS slot FROM payment_policy_status_history WHERE cause = 'status_changed'`.execute(db);
        cursor = BigInt(top.rows[0]?.slot ?? '0');
      }
      const from = cursor > REWIND_SLOTS ? cursor - REWIND_SLOTS : 0n;
      const changes = inChainOrder(await unannounced(db, from));
      let n = 0;
      for (const c of changes) {
        const resumed = c.new_status === 'Active';
        if (resumed) await unpark(db, [c.policy]);
        const name = resumed ? 'subscription.resumed' as const : 'subscription.paused' as const;
        const due = c.due === null ? null : Number(c.due);
        if (await announce(lifecycle, {
          name, key: statusEventKey(name, c.policy, c.signature), gateway: c.gateway, policy: c.policy, trackingId: c.tracking_id, dueAt: due,
          details: { variant: c.variant, from: c.old_status, signature: c.signature, slot: Number(c.slot), by: 'payer' },
        })) n += 1;
        if (BigInt(c.slot) > cursor) cursor = BigInt(c.slot);
      }
      return n + canceled;
    },
  };
}

interface Deletion { policy: string; signature: string; slot: string; block_time: string | null; gateway: string; tracking_id: string; variant: string }

/** subscription.canceled for the served gateways' policies deleted on chain (by their owner, the only one who may). */
function watchDeletions(db: Db, lifecycle: LifecycleDeps): StatusWatch {
  let cursor: bigint | undefined;
  return {
    async run() {
      if (cursor === undefined) {
        const top = await sql<{ slot: string | null }>`SELECT max(slot)::text AS slot FROM events WHERE name = 'PaymentPolicyDeleted'`.execute(db);
        cursor = BigInt(top.rows[0]?.slot ?? '0');
      }
      const from = cursor > REWIND_SLOTS ? cursor - REWIND_SLOTS : 0n;
      const r = await sql<Deletion>`
        SELECT p.address AS policy, e.signature, e.slot::text AS slot, e.block_time::text AS block_time, p.gateway, p.tracking_id, p.variant
        FROM events e
        JOIN payment_policies p ON p.address = e.data->>'payment_policy'
        JOIN scheduler_gateways g ON g.gateway = p.gateway AND g.state = 'active'
        WHERE e.name = 'PaymentPolicyDeleted' AND e.slot >= ${from.toString()}::bigint
          AND NOT EXISTS (SELECT 1 FROM service_events s WHERE s.event_key = 'subscription.canceled:' || p.address || ':deleted:' || e.signature)
        ORDER BY e.slot, e.seq LIMIT ${LIMIT}`.execute(db);
      let n = 0;
      for (const d of r.rows) {
        if (await announce(lifecycle, {
          name: 'subscription.canceled', key: deletionEventKey(d.policy, d.signature), gateway: d.gateway, policy: d.policy, trackingId: d.tracking_id, dueAt: null,
          details: {
            variant: d.variant, by: 'payer', reason: 'deleted', canceledAt: d.block_time === null ? null : Number(d.block_time),
            signature: d.signature, slot: Number(d.slot),
          },
        })) n += 1;
        if (BigInt(d.slot) > cursor) cursor = BigInt(d.slot);
      }
      return n;
    },
  };
}

/** Status changes to Paused or back to Active of the active gateways' policies, from `fromSlot`, not announced yet. */
async function unannounced(db: Db, fromSlot: bigint): Promise<Change[]> {
  const r = await sql<Change>`
    SELECT h.policy, h.new_status, h.old_status, h.slot::text AS slot, h.signature, p.gateway, p.tracking_id, p.variant,
           p.next_payment_due::text AS due, p.status
    FROM payment_policy_status_history h
    JOIN payment_policies p ON p.address = h.policy
    JOIN scheduler_gateways g ON g.gateway = p.gateway AND g.state = 'active'
    WHERE h.cause = 'status_changed' AND h.slot >= ${fromSlot.toString()}::bigint AND h.new_status IN ('Paused', 'Active')
      AND NOT EXISTS (SELECT 1 FROM service_events e WHERE e.event_key =
            (CASE h.new_status WHEN 'Paused' THEN 'subscription.paused:' ELSE 'subscription.resumed:' END) || h.policy || ':' || h.signature)
    ORDER BY h.slot, h.event_id LIMIT ${LIMIT}`.execute(db);
  return r.rows;
}

/**
 * The rows hold no order of the transactions within one slot, where a pause and its resume
 * can both land: of one policy's changes in a slot, the one that left the policy as the read
 * model shows it now comes last, so the merchant hears them as they happened.
 */
export function inChainOrder<C extends Pick<Change, 'policy' | 'slot' | 'new_status' | 'status'>>(rows: readonly C[]): C[] {
  const out: C[] = [];
  for (let i = 0; i < rows.length;) {
    let j = i;
    while (j < rows.length && rows[j]!.slot === rows[i]!.slot) j += 1;
    const rank = (c: C): string => `${c.policy}:${c.new_status === c.status ? 1 : 0}`;
    out.push(...rows.slice(i, j).map((c, k) => ({ c, k })).sort((a, b) => rank(a.c).localeCompare(rank(b.c)) || a.k - b.k).map((x) => x.c));
    i = j;
  }
  return out;
}
