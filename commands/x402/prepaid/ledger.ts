/**
 * The x402://prepaid ledger in Postgres: the credits paid (one row per OneTime policy
 * executed in a Payment transaction) and every request drawn from them (one row per
 * request, written before Redis counts it, so a counter Redis lost is rebuilt from here).
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { createLru } from '../../../src/kernel/domain/lru.js';
import { MAX_HOLES, sliceText, type Gap } from '../meter-slices.js';

import { groupedWrites } from '../../../infra/postgres/grouped-writes.js';
import { backendsDone, backendsInDoubt, columnOf, runPrepared } from '../../../infra/postgres/prepared.js';
import { createServedMarks } from '../../settlement/served-marks.js';
import { DEFAULT_RESERVATION_SECONDS } from '../../settlement/usage-ledger.js';
import { createMeterAhead, type MeterAhead } from '../meter-pool.js';
import { overlapOf } from '../meter-slices.js';

export interface PaidCredit {
  policy: string;
  payer: string;
  gateway: string;
  requirementId: string;
  credit: bigint;
  transaction?: string;
  /** created_at on chain (unix s) of the policy paid: which policy of its address (one is reused when its user payment is created again) */
  policyCreatedAt?: string;
}

/** Where credits and their use are kept durably. */
export interface CreditLedger {
  /**
   * records a credit once its payment is confirmed; true when it counted a payment. A second record of
   * the same policy (its created_at) changes nothing. Another policy paid at the same address (the payer
   * deleted its policy and its user payment, and the program reused the address) is another payment of
   * the credit there, which then serves the terms paid last: at the same gateway its amount adds to the
   * credit (what was left stays the payer's); at another gateway the credit is what was drawn so far
   * (`usedNow`, read only then) plus its amount: one merchant's credit is never drawn for another's requests
   */
  recordCredit(c: PaidCredit, usedNow?: () => Promise<bigint>): Promise<boolean>;
  /** `fresh`: read past any cache (a credit grows when its address is paid again) */
  credit(policy: string, opts?: { fresh?: boolean }): Promise<PaidCredit | undefined>;
  /** the addresses of the payer's credits bought under the requirement, newest first (at most `limit`), policy accounts closed or not */
  creditsOf(payer: string, requirementId: string, limit: number): Promise<string[]>;
  /**
   * writes one request's cost once counted, with the slice of the credit it holds; fails with
   * an exclusion violation when another request holds an overlapping slice (../meter-slices.ts)
   */
  recordUse(u: {
    requestId: string; policy: string; gateway: string; amount: bigint; sliceStart?: bigint;
    /** a row recorded ahead (../meter-pool.ts): a reservation, drawn only once servedUse() is durable (migration 1022) */
    reserve?: boolean;
  }): Promise<void>;
  /** the request of a row recorded ahead was served: its draw stands once this resolves; nothing for a row drawn when written */
  servedUse(requestId: string): Promise<void>;
  /** makes every servedUse() so far durable now (a node stopping, its requests answered) */
  flush(): Promise<void>;
  /** rows recorded ahead for busy credits, when this ledger keeps them */
  readonly ahead?: MeterAhead;
  /** takes back a recorded cost; `cause`: the error of its write, when the write may still have committed (waited for first) */
  discardUse(requestId: string, cause?: unknown): Promise<void>;
  /** takes back the cost of a request that ended unanswered: the row as it was, undefined when there was none */
  unservedUse(requestId: string): Promise<{ policy: string; amount: bigint; sliceEnd: bigint | null } | undefined>;
  /** the credit's high mark: the end of its highest slice, at least everything drawn from it */
  used(policy: string): Promise<bigint>;
  /**
   * what a counter Redis lost or let fall behind is set from: the high mark (used()), and the gaps
   * below it no row holds, lowest first (MAX_HOLES at most): draws given back or never written,
   * which the payer may draw again. None when a row holds no slice (recorded before slices were kept).
   */
  rebuild(policy: string): Promise<{ mark: bigint; gaps: Gap[] }>;
}

type Use = Parameters<CreditLedger['recordUse']>[0];

/**
 * The requests' rows: one fixed text whatever the group's size (arrays unnested), a prepared
 * statement (infra/postgres/prepared.ts); ordered by policy, the key the ledger locks a row's
 * slice by (migration 1010), so concurrent groups lock in one order.
 */
const INSERT_USES = {
  name: 'prepaid_usage_insert_uses_reserved',
  text: `INSERT INTO prepaid_usage (request_id, policy, gateway, amount, slice, reserved_until, served_by, served_seq)
    SELECT r, p, g, a::numeric, s::int8range, CASE WHEN q IS NULL THEN NULL ELSE now() + make_interval(secs => $7::float8) END,
           CASE WHEN q IS NULL THEN NULL ELSE $8::bigint END, q::bigint
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(r, p, g, a, s, q)
    ORDER BY p`,
};

/**
 * `reservationSeconds`: how long a row recorded ahead may wait for its request's answer before the settler
 * deletes it (as pay-as-you-go's, X402_PAYG_RESERVATION_SECONDS); `ahead`: the most rows a busy credit has
 * recorded ahead (../meter-pool.ts; 0 or absent: none).
 */
export function createCreditLedger(db: Db, opts: { reservationSeconds?: number; ahead?: number; onError?: (err: unknown) => void } = {}): CreditLedger {
  const reservation = opts.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
  const deleteRow = (requestId: string) => db.deleteFrom('prepaid_usage').where('request_id', '=', requestId).execute();
  const marks = createServedMarks(db, { reservationSeconds: reservation, deleteRow });
  const insert = groupedWrites(async (rows: readonly (Use & { seq: number | undefined })[]) => {
    const col = columnOf(rows);
    await runPrepared(db, INSERT_USES, [
      col((u) => u.requestId), col((u) => u.policy), col((u) => u.gateway), col((u) => u.amount.toString()), col((u) => sliceText(u.sliceStart, u.amount)),
      col((u) => (u.seq === undefined ? null : String(u.seq))), reservation, marks.node,
    ]);
  }, { inFlight: 2, round: true });
  return {
    recordCredit: (c, usedNow) => db.transaction().execute(async (tx) => {
      const created = c.policyCreatedAt ?? null;
      const payment = { policy: c.policy, policy_created_at: created, gateway: c.gateway, requirement_id: c.requirementId, amount: c.credit.toString(), transaction: c.transaction ?? null };
      const row = await tx.selectFrom('prepaid_credits').select(['credit', 'gateway', 'transaction', 'policy_created_at'])
        .where('policy', '=', c.policy).forUpdate().executeTakeFirst();
      if (!row) {
        const inserted = await tx.insertInto('prepaid_credits').values({
          policy: c.policy, payer: c.payer, gateway: c.gateway, requirement_id: c.requirementId, credit: c.credit.toString(),
          transaction: c.transaction ?? null, policy_created_at: created,
        }).onConflict((oc) => oc.column('policy').doNothing()).returning('policy').executeTakeFirst();
        // a record of the same payment committed meanwhile (two nodes): counted there
        if (!inserted) return false;
        await tx.insertInto('prepaid_credit_payments').values(payment).onConflict((oc) => oc.doNothing()).execute();
        return true;
      }
      // another policy at this address: created at another time, or paid by another transaction (two policies
      // created within one second have the same created_at). A payment recorded again (its settlement retried, an
      // existing policy's proof) names the same transaction or none
      const otherPolicy = row.policy_created_at !== null && created !== null && row.policy_created_at !== created;
      const otherTransaction = c.transaction !== undefined && row.transaction !== null && c.transaction !== row.transaction;
      if (!otherPolicy && !otherTransaction) {
        if (row.policy_created_at === null && created !== null) {
          await tx.updateTable('prepaid_credits').set({ policy_created_at: created }).where('policy', '=', c.policy).execute();
          await tx.updateTable('prepaid_credit_payments').set({ policy_created_at: created })
            .where('policy', '=', c.policy).where('policy_created_at', 'is', null).execute();
        }
        return false;
      }
      // another policy at this address, paid: at the same gateway, what is left of the credit stays the payer's (drawn
      // under the terms paid last); bought from another gateway, the credit starts from what was drawn so far
      const base = row.gateway === c.gateway || !usedNow ? BigInt(row.credit) : await usedNow();
      await tx.updateTable('prepaid_credits').set({
        credit: (base + c.credit).toString(), requirement_id: c.requirementId, gateway: c.gateway, transaction: c.transaction ?? null, policy_created_at: created,
      }).where('policy', '=', c.policy).execute();
      await tx.insertInto('prepaid_credit_payments').values(payment).onConflict((oc) => oc.doNothing()).execute();
      return true;
    }),
    async credit(policy) {
      const row = await db.selectFrom('prepaid_credits').selectAll().where('policy', '=', policy).executeTakeFirst();
      if (!row) return undefined;
      return {
        policy: row.policy, payer: row.payer, gateway: row.gateway, requirementId: row.requirement_id, credit: BigInt(row.credit),
        ...(row.transaction !== null ? { transaction: row.transaction } : {}),
        ...(row.policy_created_at !== null ? { policyCreatedAt: row.policy_created_at } : {}),
      };
    },
    async creditsOf(payer, requirementId, limit) {
      const rows = await db.selectFrom('prepaid_credits').select('policy').where('payer', '=', payer).where('requirement_id', '=', requirementId)
        .orderBy('paid_at', 'desc').limit(limit).execute();
      return rows.map((r) => r.policy);
    },
    // concurrent requests' rows in one statement (a group commit), each still written before its answer: the rows
    // of one round of the event loop together, and the rows arriving while two are in flight in the next
    // (Postgres's cost is mostly per statement: the x402 bench's profile, test/bench/README.md)
    async recordUse(u) {
      // a reservation is numbered by this process's served marks (../../settlement/served-marks.ts)
      const seq = u.reserve === true ? marks.open(u.requestId, true) : undefined;
      try {
        await insert({ ...u, seq });
      } catch (err) {
        if (seq !== undefined && overlapOf(err)) marks.notWritten(seq);
        throw err;
      }
    },
    servedUse: (requestId) => marks.served(requestId),
    flush: () => marks.flush(),
    async discardUse(requestId, cause) {
      // a write whose answer was lost may still commit: its statement is waited for first (prepared.ts)
      await marks.removed(requestId, async () => { await backendsDone(db, backendsInDoubt(cause)); await deleteRow(requestId); });
    },
    unservedUse: (requestId) => marks.removed(requestId, async () => {
      const row = await db.deleteFrom('prepaid_usage').where('request_id', '=', requestId)
        .returning(['policy', 'amount', sql<string | null>`upper(slice)::text`.as('slice_end')]).executeTakeFirst();
      return row && { policy: row.policy, amount: BigInt(row.amount), sliceEnd: row.slice_end === null ? null : BigInt(row.slice_end) };
    }),
    ...(opts.ahead ? { ahead: createMeterAhead({ max: opts.ahead, reservationSeconds: reservation, ...(opts.onError ? { onError: opts.onError } : {}) }) } : {}),
    async used(policy) {
      // rows recorded before slices were kept count by their sum
      const r = await sql<{ total: string | null }>`
        SELECT greatest(coalesce(max(upper(slice)), 0), coalesce(sum(amount), 0))::text AS total FROM prepaid_usage WHERE policy = ${policy}`.execute(db);
      return BigInt(r.rows[0]?.total ?? '0');
    },
    async rebuild(policy) {
      // the gaps between the slices in order (through prepaid_usage_slice_idx): each slice's start beyond the end before it
      const r = await sql<{ mark: string; unsliced: boolean; gaps: [string, string][] }>`
        SELECT (SELECT greatest(coalesce(max(upper(slice)), 0), coalesce(sum(amount), 0)) FROM prepaid_usage WHERE policy = ${policy})::text AS mark,
               EXISTS (SELECT 1 FROM prepaid_usage WHERE policy = ${policy} AND slice IS NULL) AS unsliced,
               (SELECT coalesce(json_agg(json_build_array(x.s::text, x.e::text) ORDER BY x.s), '[]') FROM (
                  SELECT g.s, g.e FROM (
                    SELECT lag(upper(slice), 1, 0::int8) OVER (ORDER BY lower(slice)) AS s, lower(slice) AS e
                    FROM prepaid_usage WHERE policy = ${policy} AND slice IS NOT NULL) g
                  WHERE g.e > g.s ORDER BY g.s LIMIT ${MAX_HOLES}) x) AS gaps`.execute(db);
      const row = r.rows[0];
      const gaps = row && !row.unsliced ? row.gaps.map(([s, e]): Gap => [BigInt(s), BigInt(e)]) : [];
      return { mark: BigInt(row?.mark ?? '0'), gaps };
    },
  };
}

/** Served rows recorded ahead made plain draws in one round at most, so that the reservations left stay few. */
const FOLD_BATCH = 10_000;

/**
 * The settler's round over the prepaid rows recorded ahead (migration 1022). Those served become plain
 * draws (reserved_until NULL, what their process's mark said), so that each round reads only the
 * reservations still open. Those whose request was never answered within their bound are deleted: the
 * process that wrote them died before it took them, or before it answered; they were never drawn.
 * Returns the credits they held slices of: their counters are to be rebuilt from the ledger (the rows'
 * slices become the payer's to draw again), since whether the dead process gave them back is not known.
 */
export async function dropExpiredCreditReservations(db: Db): Promise<string[]> {
  await sql`UPDATE prepaid_usage SET reserved_until = NULL WHERE request_id IN (
    SELECT u.request_id FROM prepaid_usage u WHERE u.reserved_until IS NOT NULL AND prepaid_usage_served(u) LIMIT ${FOLD_BATCH})`.execute(db);
  const rows = await db.deleteFrom('prepaid_usage').where('reserved_until', '<', sql<Date>`now()`)
    .where(sql<boolean>`NOT prepaid_usage_served(prepaid_usage)`).returning('policy').execute();
  return [...new Set(rows.map((r) => r.policy))];
}

/**
 * The ledger with the credits it found kept in memory: the bearer path reads each one from
 * Postgres once per node (up to `capacity`). A credit changes only when its address is paid
 * again, so a draw refused on what this node kept reads it afresh first (credit.ts).
 */
export function cachedCredits(ledger: CreditLedger, capacity = 10_000): CreditLedger {
  const known = createLru<string, PaidCredit>(capacity);
  return {
    ...ledger,
    async recordCredit(c, usedNow) {
      const counted = await ledger.recordCredit(c, usedNow);
      if (counted) known.delete(c.policy);
      return counted;
    },
    async credit(policy, opts) {
      const hit = opts?.fresh === true ? undefined : known.get(policy);
      if (hit) return hit;
      const row = await ledger.credit(policy);
      if (row) known.set(policy, row);
      return row;
    },
  };
}
