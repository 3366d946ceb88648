/**
 * The unsettled and unbillable pay-as-you-go usage that `tributary status` and every
 * /metrics scrape report is read through partial indexes: the work of a scrape grows with
 * the rows still unsettled or marked unbillable, not with every chunk ever metered. Given a
 * table of 60,000 chunks of which 50 are unsettled and 40 unbillable, the totals are exact
 * and the plan scans no part of payg_usage but those two indexes.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { usageTotals, usageTotalsQuery } from '../../commands/scheduler/report.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number; Plans?: PlanNode[] }

const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

describe('status and /metrics: pay-as-you-go usage totals', () => {
  let env: TestEnv;

  before(async () => {
    env = await createTestEnv('payg-usage-totals');
    const charge = await env.db.insertInto('payg_charges').values({
      policy: 'P', gateway: 'G', amount: '1', payment_count_before: 0, signature: 's', blockhash: 'b', wire: 'w',
    }).returning('id').executeTakeFirstOrThrow();
    // 60,000 chunks: the first 50 unsettled, the next 40 unbillable, the rest charged
    await sql`
      INSERT INTO payg_usage (request_id, policy, gateway, chunk, period_start, charge_id, unbillable_reason)
      SELECT 'r' || i, 'P' || (i % 200), 'G', 1000 + i, 0,
             CASE WHEN i > 90 THEN ${charge.id}::bigint END,
             CASE WHEN i BETWEEN 51 AND 90 THEN 'PolicyExpired (6065): expired' END
      FROM generate_series(1, 60000) AS i`.execute(env.db);
    await sql`VACUUM ANALYZE payg_usage`.execute(env.db);
  });

  after(async () => { await env?.close(); });

  it('sums the unsettled and the unbillable chunks exactly', async () => {
    // 1001..1050 and 1051..1090
    expect(await usageTotals(env.db)).to.deep.equal({ unsettled: String(50 * 1000 + (50 * 51) / 2), unbillable: String(40 * 1050 + (40 * 41) / 2) });
  });

  it('reads only the partial indexes of the unsettled and the unbillable rows, a few pages, not the table', async () => {
    const compiled = usageTotalsQuery.compile(env.db);
    const r = await sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.raw(compiled.sql)}`.execute(env.db);
    const nodes = nodesOf(r.rows[0]!['QUERY PLAN'][0].Plan);
    const scans = nodes.filter((n) => n['Relation Name'] === 'payg_usage').map((n) => n['Node Type']);
    expect(scans, 'no sequential scan of payg_usage').to.not.include('Seq Scan');
    // an index (only) scan names its index; a bitmap heap scan's index is its child's
    expect([...new Set(nodes.flatMap((n) => n['Index Name'] ?? []))].sort()).to.deep.equal(['payg_usage_unbillable_idx', 'payg_usage_unsettled_idx']);
    const pages = await sql<{ n: number }>`SELECT relpages AS n FROM pg_class WHERE relname = 'payg_usage'`.execute(env.db);
    const root = nodes[0]!;
    const touched = (root['Shared Hit Blocks'] ?? 0) + (root['Shared Read Blocks'] ?? 0);
    expect(touched, `pages touched of a ${pages.rows[0]!.n}-page table`).to.be.below(pages.rows[0]!.n / 10);
  });
});
