/**
 * The events lists' prepared statements under a generic plan. The read pool prepares
 * every statement, and after a few executions Postgres may keep a generic plan, planned
 * without the parameters' values; forced here (plan_cache_mode = force_generic_plan), each
 * list mode must still read its own index. The regression: a generic `name = $1` assumed
 * every name an even share of the archive, so a rare name's page walked the slot index
 * and filtered on name (the whole archive read for 50 events).
 */
import { expect } from 'chai';
import { sql, type CompiledQuery } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { eventsQuery, listEventsJson, type EventWhere } from '../../queries/events/events-query.js';
import { EVENT_NAMES, type EventName } from '../../src/kernel/events/catalog.js';

const ROWS = 40_000;
const RARE: EventName = 'PaymentGatewayDeleted';
const KINDS = ['PaymentPolicyCreated', 'UserPaymentCreated', 'PaymentPolicyStatusChanged', 'ComposableExecuted', 'PaymentGatewayCreated'];

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }

/** The scans of `events` in a plan: node type and index. */
function scans(node: PlanNode, out: string[] = []): string[] {
  if (node['Relation Name'] === 'events') out.push(`${node['Node Type']}${node['Index Name'] !== undefined ? ` ${node['Index Name']}` : ''}`);
  for (const p of node.Plans ?? []) scans(p, out);
  return out;
}

/** A parameter as an SQL literal, for EXECUTE. */
function literal(v: unknown): string {
  if (Buffer.isBuffer(v)) return `'\\x${v.toString('hex')}'`;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return `'${String(v).replaceAll('\'', '\'\'')}'`;
}

describe('events lists under a generic plan', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let db: Db;

  before(async () => {
    env = await createTestEnv('events_generic_plans');
    // 80% PaymentRecord, the rest spread over five kinds, and 20 events of a rare name;
    // two events a slot, ten a tracking id, stored in slot order (as the archive is)
    await sql.raw(`
      INSERT INTO events (id, name, signature, slot, block_time, ix_path, event_index, memo, data)
      SELECT 'sig' || g || ':0:0',
        CASE WHEN g % 2000 = 7 THEN '${RARE}' WHEN g % 5 = 0 THEN (ARRAY['${KINDS.join('\', \'')}'])[1 + (g / 5) % 5] ELSE 'PaymentRecord' END,
        'sig' || g, 1000 + g / 2, 1700000000 + g / 2, '0', 0,
        decode(rpad(encode(convert_to('trk-' || (g / 10), 'UTF8'), 'hex'), 128, '0'), 'hex'),
        jsonb_build_object('payment_policy', md5('p' || (g % 1000)), 'amount', (1000 + g % 9000)::text)
      FROM generate_series(0, ${ROWS - 1}) g`).execute(env.db);
    await sql`ANALYZE events`.execute(env.db);
    // PREPARE, SET and EXPLAIN EXECUTE meet on its connection
    db = env.oneConnection();
  });
  after(() => env?.close());

  /** The scans of the generic plan of the list's statement for `where` (prepared as the read pool's are: parameter types left to the server). */
  async function genericScans(where: EventWhere, cache?: string): Promise<string[]> {
    const q: CompiledQuery = eventsQuery(db, where, { limit: 100, offset: 0 }).compile();
    await sql`PREPARE list AS ${sql.raw(q.sql)}`.execute(db);
    await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
    if (cache !== undefined) await sql`SELECT set_config('effective_cache_size', ${cache}, false)`.execute(db);
    try {
      const explain = await sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>`EXPLAIN (FORMAT JSON) EXECUTE list(${sql.raw(q.parameters.map(literal).join(', '))})`.execute(db);
      return scans(explain.rows[0]!['QUERY PLAN'][0].Plan);
    } finally {
      await sql`RESET plan_cache_mode`.execute(db);
      await sql`RESET effective_cache_size`.execute(db);
      await sql`DEALLOCATE list`.execute(db);
    }
  }

  it('reads a rare name\'s events through the name index', async () => {
    expect(EVENT_NAMES).to.include(RARE);
    expect(JSON.parse(String(await listEventsJson(db, { name: RARE }, { limit: 100, offset: 0 })))).to.have.length(ROWS / 2000);
    // a cache far smaller than the table stands in for a large archive, where the planner
    // costs the name index's heap reads as random ones (on 1,000,000 events, default
    // settings give the same kind of plan: with the name a parameter, 20 rows read as an even
    // share's guess, a bitmap scan and a sort here, the slot index walked and filtered there)
    expect(await genericScans({ name: RARE }, '1MB')).to.deep.equal(['Index Scan events_name_slot_idx']);
  });

  it('reads a common name\'s and a kind\'s events through an index', async () => {
    for (const name of ['PaymentRecord', 'UserPaymentCreated'] as const) {
      expect(await genericScans({ name })).to.satisfy((s: string[]) => s.length > 0 && s.every((x) => x.startsWith('Index Scan')), name);
    }
  });

  it('reads a tracking id, a slot range and one slot through their indexes', async () => {
    const memo = Buffer.alloc(64);
    memo.write('trk-123');
    expect(await genericScans({ memos: [memo] })).to.deep.equal(['Index Scan events_memo_idx']);
    expect(await genericScans({ minSlot: 5000, maxSlot: 6000 })).to.deep.equal(['Index Scan events_slot_idx']);
    expect(await genericScans({ slot: 5000 })).to.deep.equal(['Index Scan events_slot_idx']);
  });
});
