/**
 * The slices of admitted requests (1004_meter_slices, commands/x402/meter-slices.ts) kept
 * apart by a row trigger over btree indexes instead of GiST exclusion constraints. Frozen.
 *
 * Why: the GiST constraints cost about 180 µs of backend CPU a pay-as-you-go row (both
 * slices), growing with the rows one policy or account holds, since every row of a payer
 * shares the constraint's leading columns and the tree sorts them by range alone; the
 * account's slices are never reset, so the cost grew with a payer's whole history.
 *
 * The rule is the same: no two rows of one counter hold overlapping slices. Slices held
 * are pairwise disjoint, so ordered by their start their ends are ordered too: a new slice
 * [x, y) overlaps one held exactly when the held slice with the greatest start below y
 * ends after x, one btree descent. The check runs under a transaction-scoped advisory lock
 * on the counter's owner (the payer account for pay-as-you-go, whose policies all draw on
 * it; the policy for a prepaid credit), so two transactions never check past each other;
 * the statement that writes a group of rows takes them ordered by that owner, so
 * concurrent groups lock in one order. A row updated is checked against the others. A refusal is raised as the exclusion violation the
 * constraint raised (SQLSTATE 23P01, the constraint's name), which the metering code reads.
 */
import { sql, type Kysely } from 'kysely';

/**
 * The trigger body's check of one counter: refused when the held slice of `column` that starts
 * last before NEW's ends (rows matching `sameCounter`, NEW's own row aside) ends after NEW's starts.
 */
function refuseOverlap(table: string, column: string, sameCounter: string, constraint: string, message: string): string {
  return `
      IF NEW.${column} IS NOT NULL AND EXISTS (
        SELECT 1 FROM (SELECT u.${column} FROM ${table} u
                       WHERE ${sameCounter} AND lower(u.${column}) < upper(NEW.${column}) AND u.request_id <> NEW.request_id
                       ORDER BY lower(u.${column}) DESC LIMIT 1) s
        WHERE upper(s.${column}) > lower(NEW.${column})) THEN
        RAISE EXCEPTION ${message}
          USING ERRCODE = 'exclusion_violation', CONSTRAINT = '${constraint}', TABLE = '${table}';
      END IF;`;
}

/** A row trigger's function that locks the counters' owner (`owner`, an expression of NEW), then runs `checks`. */
function slicesApart(name: string, anySlice: string, owner: string, checks: string[]): string {
  return `
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      IF NOT (${anySlice}) THEN RETURN NEW; END IF;
      PERFORM pg_advisory_xact_lock(hashtextextended('tributary:${name}:' || ${owner}, 0));${checks.join('')}
      RETURN NEW;
    END
    $fn$`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(slicesApart('payg_usage_slices_apart', 'NEW.period_slice IS NOT NULL OR NEW.account_slice IS NOT NULL', 'coalesce(NEW.user_payment, NEW.policy)', [
    refuseOverlap('payg_usage', 'period_slice', 'u.policy = NEW.policy AND u.period_start = NEW.period_start', 'payg_usage_period_slice_excl',
      `'the period slice % of policy % overlaps one the ledger holds', NEW.period_slice, NEW.policy`),
    refuseOverlap('payg_usage', 'account_slice', 'u.user_payment = NEW.user_payment', 'payg_usage_account_slice_excl',
      `'the account slice % of % overlaps one the ledger holds', NEW.account_slice, NEW.user_payment`),
  ])).execute(db);
  await sql.raw(slicesApart('prepaid_usage_slices_apart', 'NEW.slice IS NOT NULL', 'NEW.policy', [
    refuseOverlap('prepaid_usage', 'slice', 'u.policy = NEW.policy', 'prepaid_usage_slice_excl',
      `'the slice % of credit % overlaps one the ledger holds', NEW.slice, NEW.policy`),
  ])).execute(db);
  // the period's and the credit's index gain the slice's start (they still serve every lookup by policy and period, or policy)
  await sql`CREATE INDEX payg_usage_period_slice_idx ON payg_usage (policy, period_start, lower(period_slice))`.execute(db);
  await sql`CREATE INDEX payg_usage_account_slice_idx ON payg_usage (user_payment, lower(account_slice)) WHERE account_slice IS NOT NULL`.execute(db);
  await sql`CREATE INDEX prepaid_usage_slice_idx ON prepaid_usage (policy, lower(slice))`.execute(db);
  await sql`CREATE TRIGGER payg_usage_slices_apart BEFORE INSERT OR UPDATE OF period_slice, account_slice, policy, period_start, user_payment ON payg_usage
    FOR EACH ROW EXECUTE FUNCTION payg_usage_slices_apart()`.execute(db);
  await sql`CREATE TRIGGER prepaid_usage_slices_apart BEFORE INSERT OR UPDATE OF slice, policy ON prepaid_usage
    FOR EACH ROW EXECUTE FUNCTION prepaid_usage_slices_apart()`.execute(db);
  await sql`ALTER TABLE payg_usage DROP CONSTRAINT payg_usage_period_slice_excl, DROP CONSTRAINT payg_usage_account_slice_excl`.execute(db);
  await sql`ALTER TABLE prepaid_usage DROP CONSTRAINT prepaid_usage_slice_excl`.execute(db);
  // each served by the index that now leads with its columns
  await sql`DROP INDEX payg_usage_period_idx`.execute(db);
  await sql`DROP INDEX prepaid_usage_policy_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS payg_usage_period_idx ON payg_usage (policy, period_start)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS prepaid_usage_policy_idx ON prepaid_usage (policy)`.execute(db);
  await sql`ALTER TABLE prepaid_usage ADD CONSTRAINT prepaid_usage_slice_excl EXCLUDE USING gist (policy WITH =, slice WITH &&)`.execute(db);
  await sql`ALTER TABLE payg_usage ADD CONSTRAINT payg_usage_period_slice_excl EXCLUDE USING gist (policy WITH =, period_start WITH =, period_slice WITH &&)`.execute(db);
  await sql`ALTER TABLE payg_usage ADD CONSTRAINT payg_usage_account_slice_excl EXCLUDE USING gist (user_payment WITH =, account_slice WITH &&)`.execute(db);
  await sql`DROP TRIGGER IF EXISTS prepaid_usage_slices_apart ON prepaid_usage`.execute(db);
  await sql`DROP TRIGGER IF EXISTS payg_usage_slices_apart ON payg_usage`.execute(db);
  await sql`DROP INDEX IF EXISTS prepaid_usage_slice_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS payg_usage_account_slice_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS payg_usage_period_slice_idx`.execute(db);
  await sql`DROP FUNCTION IF EXISTS prepaid_usage_slices_apart()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS payg_usage_slices_apart()`.execute(db);
}
