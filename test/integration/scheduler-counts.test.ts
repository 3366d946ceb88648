/**
 * The scheduler's counters (migration 0997) against counting the tables themselves: after
 * inserts, status changes, deletes and attempts of several gateways, from concurrent
 * transactions (some rolled back) while folds run, the counts read per gateway and over all
 * gateways equal a GROUP BY of execution_intents and execution_attempts, before and after a
 * fold. The migration's backfill counts rows that existed before it; TRUNCATE clears. The
 * reports read a few counter rows and the lag index, not the growing tables.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import * as m0997 from '../../infra/migrations/0997_scheduler_counts.js';
import { ALL_GATEWAYS, foldCounts, readCounts, type SchedulerCounts } from '../../commands/scheduler/counts.js';
import { lagQuery, schedulerReport } from '../../commands/scheduler/report.js';
import type { Db } from '../../infra/postgres/database.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number; Plans?: PlanNode[] }
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

const GATEWAYS = ['G1', 'G2', 'G3'];
const STATUSES = ['pending', 'sending', 'executed', 'dropped', 'past_due', 'given_up'];
const OUTCOMES = ['executed', 'dropped', 'retry', 'cooldown', 'given_up'];
const REASONS = ['', 'InsufficientBalance', 'rpc', 'blockhash'];

/** A small deterministic generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0; return s / 2 ** 32; };
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** The counts as a plain object, keys sorted, zeros left out. */
function plain(c: SchedulerCounts): object {
  const attempts: Record<string, number> = {};
  for (const a of c.attempts) attempts[`${a.outcome}/${a.reasonCode}`] = (attempts[`${a.outcome}/${a.reasonCode}`] ?? 0) + a.n;
  return { intents: Object.fromEntries([...c.intents].filter(([, n]) => n !== 0).sort()), attempts: Object.fromEntries(Object.entries(attempts).sort()) };
}

/** The same counts straight from the tables. */
async function counted(db: Db, gateway: string): Promise<object> {
  const all = gateway === ALL_GATEWAYS;
  const intents = await sql<{ status: string; n: string }>`
    SELECT status, count(*)::text AS n FROM execution_intents WHERE ${all ? sql`true` : sql`gateway = ${gateway}`} GROUP BY status`.execute(db);
  const attempts = await sql<{ k: string; n: string }>`
    SELECT outcome || '/' || reason_code AS k, count(*)::text AS n FROM execution_attempts WHERE ${all ? sql`true` : sql`gateway = ${gateway}`} GROUP BY 1`.execute(db);
  return {
    intents: Object.fromEntries(intents.rows.map((r) => [r.status, Number(r.n)]).sort()),
    attempts: Object.fromEntries(attempts.rows.map((r) => [r.k, Number(r.n)]).sort()),
  };
}

async function expectExact(db: Db): Promise<void> {
  for (const g of [...GATEWAYS, ALL_GATEWAYS]) expect(plain(await readCounts(db, g)), `counts of ${g}`).to.deep.equal(await counted(db, g));
}

/** One writer's random statements, each in its own transaction; every fifth rolled back. */
async function writer(db: Db, seed: number, steps: number): Promise<void> {
  const r = rng(seed);
  for (let k = 0; k < steps; k++) {
    const rollback = k % 5 === 4;
    await db.transaction().execute(async (trx) => {
      const op = r();
      if (op < 0.3) {
        const g = pick(r, GATEWAYS);
        const n = 1 + Math.floor(r() * 20);
        await sql`INSERT INTO execution_intents (policy, gateway, variant, due_at, status)
          SELECT 'p' || ${seed} || '-' || ${k} || '-' || i, ${g}, 'subscription', i, (ARRAY[${sql.join(STATUSES)}])[1 + (i % 6)]
          FROM generate_series(1, ${n}) AS i`.execute(trx);
      } else if (op < 0.6) {
        // a status change of a random slice (some rows keep their status)
        await sql`UPDATE execution_intents SET status = ${pick(r, STATUSES)}, updated_at = now()
          WHERE id % 7 = ${Math.floor(r() * 7)} AND gateway = ${pick(r, GATEWAYS)}`.execute(trx);
      } else if (op < 0.7) {
        // a lease update that changes no status
        await sql`UPDATE execution_intents SET locked_by = ${`w${seed}`} WHERE id % 5 = ${Math.floor(r() * 5)}`.execute(trx);
      } else if (op < 0.8) {
        await sql`DELETE FROM execution_intents WHERE id % 11 = ${Math.floor(r() * 11)} AND gateway = ${pick(r, GATEWAYS)}`.execute(trx);
      } else {
        const n = 1 + Math.floor(r() * 10);
        await sql`INSERT INTO execution_attempts (policy, gateway, outcome, reason_code, lag_ms)
          SELECT 'p' || i, ${pick(r, GATEWAYS)}, ${pick(r, OUTCOMES)}, ${pick(r, REASONS)}, i FROM generate_series(1, ${n}) AS i`.execute(trx);
      }
      if (rollback) throw new RollbackSignal();
    }).catch((err: unknown) => {
      // random multi-row updates in differing orders can deadlock; Postgres rolls the
      // victim back, which is one more rolled-back writer for the counters to ignore
      if (!(err instanceof RollbackSignal) && (err as { code?: string }).code !== '40P01') throw err;
    });
  }
}
class RollbackSignal extends Error {}

describe('scheduler counters', () => {
  let env: TestEnv;

  before(async () => { env = await createTestEnv('scheduler-counts'); });
  after(async () => { await env?.close(); });

  it('equal counting the tables after concurrent writers (some rolled back) while folds run', async () => {
    let folding = true;
    const folds = (async () => { let moved = 0; while (folding) { moved += await foldCounts(env.db); await new Promise((res) => setTimeout(res, 5)); } return moved; })();
    await Promise.all([1, 2, 3, 4, 5, 6].map((seed) => writer(env.db, seed, 60)));
    folding = false;
    expect(await folds, 'the folds moved deltas while the writers ran').to.be.above(0);
    // the last fold may have caught up with the writers: write more with no fold running,
    // so the read below must add deltas not folded yet to the folded totals
    await writer(env.db, 7, 20);
    const pending = await sql<{ n: string }>`SELECT count(*)::text AS n FROM scheduler_counts WHERE NOT folded`.execute(env.db);
    expect(Number(pending.rows[0]!.n), 'deltas not yet folded are read too').to.be.above(0);
    await expectExact(env.db);
    await foldCounts(env.db);
    const left = await sql<{ n: string }>`SELECT count(*)::text AS n FROM scheduler_counts WHERE NOT folded`.execute(env.db);
    expect(Number(left.rows[0]!.n)).to.equal(0);
    await expectExact(env.db);
  });

  it('the migration counts the rows that existed before it', async () => {
    await m0997.down(env.db);
    await writer(env.db, 99, 40);
    await env.db.transaction().execute((trx) => m0997.up(trx));
    await expectExact(env.db);
    await writer(env.db, 100, 20);
    await expectExact(env.db);
  });

  it('TRUNCATE clears what it emptied', async () => {
    await sql`TRUNCATE execution_attempts`.execute(env.db);
    await expectExact(env.db);
    expect(plain(await readCounts(env.db, ALL_GATEWAYS))).to.have.property('attempts').that.deep.equals({});
    await sql`TRUNCATE execution_intents CASCADE`.execute(env.db);
    await expectExact(env.db);
  });

  it('the report reads counter rows and the lag index, not the tables it counts', async () => {
    // 40,000 attempts of which a few hundred executed in the last day
    await sql`INSERT INTO execution_attempts (policy, gateway, outcome, reason_code, lag_ms, at)
      SELECT 'p' || i, 'G' || (i % 3 + 1), CASE WHEN i % 100 = 0 THEN 'executed' ELSE 'retry' END, 'rpc', i % 1000,
             now() - make_interval(hours => CASE WHEN i > 35000 THEN 1 ELSE 48 END)
      FROM generate_series(1, 40000) AS i`.execute(env.db);
    await sql`INSERT INTO execution_intents (policy, gateway, variant, due_at, status)
      SELECT 'q' || i, 'G1', 'subscription', i, CASE WHEN i % 50 = 0 THEN 'pending' ELSE 'executed' END FROM generate_series(1, 40000) AS i`.execute(env.db);
    await sql`VACUUM ANALYZE execution_attempts`.execute(env.db);
    const report = await schedulerReport(env.db, undefined, 0);
    expect(report.executed).to.equal(39200);
    expect(report.failedByReason).to.deep.equal({ rpc: 39600 });
    // executed in the last day: i = 35100, 35200, …, 40000, lag i % 1000: five each of 0, 100, …, 900
    expect([report.lagP50Ms, report.lagP99Ms]).to.deep.equal([450, 900]);
    const compiled = lagQuery.compile(env.db);
    const r = await sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.raw(compiled.sql)}`.execute(env.db);
    const nodes = nodesOf(r.rows[0]!['QUERY PLAN'][0].Plan);
    expect(nodes.filter((n) => n['Relation Name'] === 'execution_attempts').map((n) => n['Node Type'])).to.not.include('Seq Scan');
    expect(nodes.flatMap((n) => n['Index Name'] ?? [])).to.include('execution_attempts_lag_idx');
    const pages = await sql<{ n: number }>`SELECT relpages AS n FROM pg_class WHERE relname = 'execution_attempts'`.execute(env.db);
    const touched = (nodes[0]!['Shared Hit Blocks'] ?? 0) + (nodes[0]!['Shared Read Blocks'] ?? 0);
    expect(touched, `pages touched of a ${pages.rows[0]!.n}-page table`).to.be.below(pages.rows[0]!.n / 10);
  });
});
