/**
 * The slices of rows inserted into the x402 ledgers (payg_usage, prepaid_usage) checked once
 * per statement instead of once per row. Frozen.
 *
 * 1010's row trigger ran a plpgsql function per row: a lock, then a query per counter through
 * SPI, about 23 µs of backend CPU a pay-as-you-go row, half of what the row's insert cost (the
 * x402 bench writes rows in groups of about ten). An AFTER INSERT statement trigger reads the
 * statement's rows from its transition table and does the same work in one lock query and one
 * query per counter for all of them. An UPDATE of a row's slices or owner keeps 1010's row
 * trigger (a transition table cannot go with a column list; nothing on a hot path updates them).
 *
 * The rule is 1010's: a new slice [x, y) overlaps one held exactly when the row starting last
 * below y (any other row of the counter, old or inserted by this statement) ends after x. The
 * check runs after the statement's rows are in the table, so two of them overlapping each other
 * are caught like any other pair (one of the two finds the other, or a row between them). The
 * owners' advisory locks (1010's keys: the payer account, or the credit's policy) are taken in
 * one order, by key, before the check; the check's query then reads with a snapshot taken after
 * the locks, so it sees every row a transaction that held them committed. A refusal raises the
 * exclusion violation the old constraint raised (SQLSTATE 23P01, its name), which the metering
 * code reads, naming the first offending row.
 */
import { sql, type Kysely } from 'kysely';

/**
 * The check of one counter over the statement's rows: the first row whose slice of `column` overlaps
 * the slice starting last below its end among the counter's other rows (`sameCounter` over `u` and `n`).
 */
function refuseOverlaps(table: string, column: string, sameCounter: string, constraint: string, message: string, owner: string): string {
  return `
      SELECT n.${column}::text, ${owner} INTO slice, holder FROM inserted n
        CROSS JOIN LATERAL (SELECT u.${column} FROM ${table} u
                            WHERE ${sameCounter} AND lower(u.${column}) < upper(n.${column}) AND u.request_id <> n.request_id
                            ORDER BY lower(u.${column}) DESC LIMIT 1) p
        WHERE n.${column} IS NOT NULL AND upper(p.${column}) > lower(n.${column})
        LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION ${message}, slice, holder USING ERRCODE = 'exclusion_violation', CONSTRAINT = '${constraint}', TABLE = '${table}';
      END IF;`;
}

/** A statement trigger's function: locks the owners (`owner` over the statement's rows `n`, in key order), then runs `checks`. */
function slicesApart(name: string, lockName: string, anySlice: string, owner: string, checks: string[]): string {
  return `
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $fn$
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
      refuseOverlaps('payg_usage', 'period_slice', 'u.policy = n.policy AND u.period_start = n.period_start', 'payg_usage_period_slice_excl',
        `'the period slice % of policy % overlaps one the ledger holds'`, 'n.policy'),
      refuseOverlaps('payg_usage', 'account_slice', 'u.user_payment = n.user_payment', 'payg_usage_account_slice_excl',
        `'the account slice % of % overlaps one the ledger holds'`, 'n.user_payment'),
    ])).execute(db);
  await sql.raw(slicesApart('prepaid_usage_slices_apart_inserted', 'prepaid_usage_slices_apart', 'n.slice IS NOT NULL', 'n.policy', [
    refuseOverlaps('prepaid_usage', 'slice', 'u.policy = n.policy', 'prepaid_usage_slice_excl',
      `'the slice % of credit % overlaps one the ledger holds'`, 'n.policy'),
  ])).execute(db);
  await sql`DROP TRIGGER payg_usage_slices_apart ON payg_usage`.execute(db);
  await sql`DROP TRIGGER prepaid_usage_slices_apart ON prepaid_usage`.execute(db);
  await sql`CREATE TRIGGER payg_usage_slices_apart BEFORE UPDATE OF period_slice, account_slice, policy, period_start, user_payment ON payg_usage
    FOR EACH ROW EXECUTE FUNCTION payg_usage_slices_apart()`.execute(db);
  await sql`CREATE TRIGGER prepaid_usage_slices_apart BEFORE UPDATE OF slice, policy ON prepaid_usage
    FOR EACH ROW EXECUTE FUNCTION prepaid_usage_slices_apart()`.execute(db);
  await sql`CREATE TRIGGER payg_usage_slices_apart_inserted AFTER INSERT ON payg_usage REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION payg_usage_slices_apart_inserted()`.execute(db);
  await sql`CREATE TRIGGER prepaid_usage_slices_apart_inserted AFTER INSERT ON prepaid_usage REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION prepaid_usage_slices_apart_inserted()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS payg_usage_slices_apart_inserted ON payg_usage`.execute(db);
  await sql`DROP TRIGGER IF EXISTS prepaid_usage_slices_apart_inserted ON prepaid_usage`.execute(db);
  await sql`DROP TRIGGER IF EXISTS payg_usage_slices_apart ON payg_usage`.execute(db);
  await sql`DROP TRIGGER IF EXISTS prepaid_usage_slices_apart ON prepaid_usage`.execute(db);
  await sql`CREATE TRIGGER payg_usage_slices_apart BEFORE INSERT OR UPDATE OF period_slice, account_slice, policy, period_start, user_payment ON payg_usage
    FOR EACH ROW EXECUTE FUNCTION payg_usage_slices_apart()`.execute(db);
  await sql`CREATE TRIGGER prepaid_usage_slices_apart BEFORE INSERT OR UPDATE OF slice, policy ON prepaid_usage
    FOR EACH ROW EXECUTE FUNCTION prepaid_usage_slices_apart()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS payg_usage_slices_apart_inserted()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS prepaid_usage_slices_apart_inserted()`.execute(db);
}
