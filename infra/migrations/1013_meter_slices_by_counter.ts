/**
 * The slices a statement inserts into the x402 ledgers checked once per counter instead of
 * once per row. Frozen.
 *
 * 1011's statement trigger looked up, for each inserted row and each of its counters, the row
 * starting last below its end: an index probe per row per counter (two for a pay-as-you-go
 * row), about half of what its check cost. Rows of one statement mostly share a counter (one
 * payer's concurrent requests), and a counter's new slices lie together at its top. So each
 * counter the statement touches is read once: the span of its new slices [lo, hi), the row
 * starting last below lo (one probe), and every row starting within the span (one range scan
 * of the same index, the new rows and any old one among them). In that list, ordered by
 * start, a slice overlaps another exactly when it starts before the furthest end of those
 * ordered before it (a window's running maximum). A row starting below the one found first
 * cannot reach lo: the rows held never overlap one another (every insert is checked here,
 * every update by 1010's row trigger), so it ends at or before that one starts.
 *
 * Locks, snapshot and refusal are 1011's: the owners' advisory locks in key order first, the
 * check's query reads what every transaction that held them committed, and an overlap raises
 * the exclusion violation (SQLSTATE 23P01, the old constraint's name) the metering code reads,
 * naming a slice of the pair.
 */
import { sql, type Kysely } from 'kysely';
import * as m1011 from './1011_meter_slices_statement.js';

interface Counter {
  /** the ledger's table and its slice column */
  table: string; column: string;
  /** the columns naming one counter (an index leads with them, then lower(column)) */
  keys: string[];
  /** the constraint named in a refusal, its message (two %: the slice and the owner) and the owner named */
  constraint: string; message: string; owner: string;
}

/** The check of one counter over the statement's rows `inserted`. */
function refuseOverlaps(c: Counter): string {
  const same = c.keys.map((k) => `u.${k} = b.${k}`).join(' AND ');
  const held = `u.${c.column} IS NOT NULL AND ${same}`;
  return `
      SELECT l.s::text, l.owner INTO slice, holder FROM (
        SELECT u.s, u.owner, max(upper(u.s)) OVER (PARTITION BY ${c.keys.map((k) => `b.${k}`).join(', ')} ORDER BY lower(u.s), u.request_id
                                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
        FROM (SELECT ${c.keys.map((k) => `i.${k}`).join(', ')}, min(lower(i.${c.column})) AS lo, max(upper(i.${c.column})) AS hi
              FROM inserted i WHERE i.${c.column} IS NOT NULL GROUP BY ${c.keys.map((k) => `i.${k}`).join(', ')}) b
        CROSS JOIN LATERAL (
          (SELECT u.${c.column} AS s, u.${c.owner} AS owner, u.request_id FROM ${c.table} u
           WHERE ${held} AND lower(u.${c.column}) < b.lo ORDER BY lower(u.${c.column}) DESC LIMIT 1)
          UNION ALL
          (SELECT u.${c.column}, u.${c.owner}, u.request_id FROM ${c.table} u
           WHERE ${held} AND lower(u.${c.column}) >= b.lo AND lower(u.${c.column}) < b.hi)) u
      ) l
      WHERE lower(l.s) < l.reach
      LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION ${c.message}, slice, holder USING ERRCODE = 'exclusion_violation', CONSTRAINT = '${c.constraint}', TABLE = '${c.table}';
      END IF;`;
}

/** 1011's statement trigger function (same name, same locks), with `checks`. */
function slicesApart(name: string, lockName: string, anySlice: string, owner: string, checks: string[]): string {
  return `
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      slice text;
      holder text;
    BEGIN
      PERFORM pg_advisory_xact_lock(k) FROM (
        SELECT DISTINCT hashtextextended('tributary:${lockName}:' || ${owner}, 0) AS k FROM inserted n WHERE ${anySlice} ORDER BY 1) keys;${checks.join('')}
      RETURN NULL;
    END
    $fn$`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(slicesApart('payg_usage_slices_apart_inserted', 'payg_usage_slices_apart',
    'n.period_slice IS NOT NULL OR n.account_slice IS NOT NULL', 'coalesce(n.user_payment, n.policy)', [
      refuseOverlaps({ table: 'payg_usage', column: 'period_slice', keys: ['policy', 'period_start'], owner: 'policy',
        constraint: 'payg_usage_period_slice_excl', message: `'the period slice % of policy % overlaps one the ledger holds'` }),
      refuseOverlaps({ table: 'payg_usage', column: 'account_slice', keys: ['user_payment'], owner: 'user_payment',
        constraint: 'payg_usage_account_slice_excl', message: `'the account slice % of % overlaps one the ledger holds'` }),
    ])).execute(db);
  await sql.raw(slicesApart('prepaid_usage_slices_apart_inserted', 'prepaid_usage_slices_apart', 'n.slice IS NOT NULL', 'n.policy', [
    refuseOverlaps({ table: 'prepaid_usage', column: 'slice', keys: ['policy'], owner: 'policy',
      constraint: 'prepaid_usage_slice_excl', message: `'the slice % of credit % overlaps one the ledger holds'` }),
  ])).execute(db);
}

/** 1011's functions again: its down() takes its triggers and functions away, its up() makes them anew. */
export async function down(db: Kysely<any>): Promise<void> {
  await m1011.down(db);
  await m1011.up(db);
}
