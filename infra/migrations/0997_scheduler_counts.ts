/**
 * Counters of the scheduler's intents by status and of its attempts by outcome and reason,
 * kept by triggers, so that `tributary status`, every /metrics scrape and a gateway's
 * scheduler status read a few counter rows instead of counting execution_intents and
 * execution_attempts whole (both grow with every due date ever paid). Frozen.
 *
 * Writers never wait on each other: each statement on the two tables appends its deltas
 * (one row per gateway and key the statement changed, plus the same under gateway '*' for
 * the totals over all gateways); `fold_scheduler_counts()` moves the deltas into one total
 * row per key, under an advisory lock so two folds never interleave. A reader sums totals
 * and pending deltas, which is exact at every moment. Intents are counted as they stand
 * (an update moves one count from its old status to its new one, a delete takes it away);
 * attempts are counted as recorded, so a counter never falls.
 *
 * The backfill runs with both tables locked against writes, after the triggers exist, so no
 * row is counted twice or missed. The lag percentiles of the last day read a partial index
 * of executed attempts by time instead of the whole table.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`LOCK TABLE execution_intents, execution_attempts IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  await sql`
    CREATE TABLE scheduler_counts (
      id bigserial PRIMARY KEY,
      gateway text NOT NULL,
      -- intent (key = status) | attempt (key = outcome, reason_code = the failure class)
      kind text NOT NULL,
      key text NOT NULL,
      reason_code text NOT NULL DEFAULT '',
      n bigint NOT NULL,
      folded boolean NOT NULL DEFAULT false
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX scheduler_counts_total_key ON scheduler_counts (gateway, kind, key, reason_code) WHERE folded`.execute(db);
  await sql`CREATE INDEX scheduler_counts_delta_idx ON scheduler_counts (gateway, kind) WHERE NOT folded`.execute(db);

  await sql`
    CREATE FUNCTION scheduler_count_intents() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO scheduler_counts (gateway, kind, key, n)
        SELECT coalesce(gateway, '*'), 'intent', status, count(*) FROM new_rows GROUP BY GROUPING SETS ((gateway, status), (status));
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO scheduler_counts (gateway, kind, key, n)
        SELECT coalesce(gateway, '*'), 'intent', status, -count(*) FROM old_rows GROUP BY GROUPING SETS ((gateway, status), (status));
      ELSE
        INSERT INTO scheduler_counts (gateway, kind, key, n)
        SELECT coalesce(gateway, '*'), 'intent', status, sum(d) FROM (
          SELECT o.gateway, o.status, -1 AS d FROM old_rows o JOIN new_rows w USING (id) WHERE (o.gateway, o.status) IS DISTINCT FROM (w.gateway, w.status)
          UNION ALL
          SELECT w.gateway, w.status, 1 AS d FROM old_rows o JOIN new_rows w USING (id) WHERE (o.gateway, o.status) IS DISTINCT FROM (w.gateway, w.status)
        ) x GROUP BY GROUPING SETS ((gateway, status), (status)) HAVING sum(d) <> 0;
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER scheduler_count_intents_ins AFTER INSERT ON execution_intents REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scheduler_count_intents()`.execute(db);
  await sql`CREATE TRIGGER scheduler_count_intents_upd AFTER UPDATE ON execution_intents REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scheduler_count_intents()`.execute(db);
  await sql`CREATE TRIGGER scheduler_count_intents_del AFTER DELETE ON execution_intents REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION scheduler_count_intents()`.execute(db);

  await sql`
    CREATE FUNCTION scheduler_count_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO scheduler_counts (gateway, kind, key, reason_code, n)
      SELECT coalesce(gateway, '*'), 'attempt', outcome, reason_code, count(*) FROM new_rows
      GROUP BY GROUPING SETS ((gateway, outcome, reason_code), (outcome, reason_code));
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER scheduler_count_attempts_ins AFTER INSERT ON execution_attempts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scheduler_count_attempts()`.execute(db);

  // TRUNCATE passes no rows to a trigger: it clears the counts of what it emptied
  await sql`
    CREATE FUNCTION scheduler_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM scheduler_counts WHERE kind = CASE TG_TABLE_NAME WHEN 'execution_intents' THEN 'intent' ELSE 'attempt' END;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER scheduler_counts_truncate_intents AFTER TRUNCATE ON execution_intents FOR EACH STATEMENT EXECUTE FUNCTION scheduler_counts_truncated()`.execute(db);
  await sql`CREATE TRIGGER scheduler_counts_truncate_attempts AFTER TRUNCATE ON execution_attempts FOR EACH STATEMENT EXECUTE FUNCTION scheduler_counts_truncated()`.execute(db);

  await sql`
    CREATE FUNCTION fold_scheduler_counts() RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE moved bigint;
    BEGIN
      IF NOT pg_try_advisory_xact_lock(hashtext('fold_scheduler_counts')) THEN RETURN 0; END IF;
      WITH d AS (DELETE FROM scheduler_counts WHERE NOT folded RETURNING gateway, kind, key, reason_code, n),
           s AS (SELECT gateway, kind, key, reason_code, sum(n) AS n, count(*) AS rows FROM d GROUP BY 1, 2, 3, 4),
           i AS (INSERT INTO scheduler_counts (gateway, kind, key, reason_code, n, folded)
                 SELECT gateway, kind, key, reason_code, n, true FROM s ORDER BY 1, 2, 3, 4
                 ON CONFLICT (gateway, kind, key, reason_code) WHERE folded DO UPDATE SET n = scheduler_counts.n + excluded.n)
      SELECT coalesce(sum(rows), 0) INTO moved FROM s;
      RETURN moved;
    END $$`.execute(db);

  await sql`
    INSERT INTO scheduler_counts (gateway, kind, key, n, folded)
    SELECT coalesce(gateway, '*'), 'intent', status, count(*), true FROM execution_intents GROUP BY GROUPING SETS ((gateway, status), (status))`.execute(db);
  await sql`
    INSERT INTO scheduler_counts (gateway, kind, key, reason_code, n, folded)
    SELECT coalesce(gateway, '*'), 'attempt', outcome, reason_code, count(*), true FROM execution_attempts
    GROUP BY GROUPING SETS ((gateway, outcome, reason_code), (outcome, reason_code))`.execute(db);

  await sql`CREATE INDEX execution_attempts_lag_idx ON execution_attempts (at) INCLUDE (lag_ms) WHERE outcome = 'executed' AND lag_ms IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS execution_attempts_lag_idx`.execute(db);
  await sql`DROP TRIGGER IF EXISTS scheduler_count_intents_ins ON execution_intents`.execute(db);
  await sql`DROP TRIGGER IF EXISTS scheduler_count_intents_upd ON execution_intents`.execute(db);
  await sql`DROP TRIGGER IF EXISTS scheduler_count_intents_del ON execution_intents`.execute(db);
  await sql`DROP TRIGGER IF EXISTS scheduler_count_attempts_ins ON execution_attempts`.execute(db);
  await sql`DROP TRIGGER IF EXISTS scheduler_counts_truncate_intents ON execution_intents`.execute(db);
  await sql`DROP TRIGGER IF EXISTS scheduler_counts_truncate_attempts ON execution_attempts`.execute(db);
  await sql`DROP FUNCTION IF EXISTS fold_scheduler_counts()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS scheduler_counts_truncated()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS scheduler_count_attempts()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS scheduler_count_intents()`.execute(db);
  await sql`DROP TABLE IF EXISTS scheduler_counts`.execute(db);
}
