/**
 * The time-window mode of the events API over an archive of 300,000 events (issue 20):
 * block time follows slot, as on chain, with a few events whose block time runs backwards
 * or forwards and some without one. Every page equals the one computed in memory from the
 * whole table (block time in the window, slot then seq newest first, limit/offset),
 * through plain and named (prepared, generic-plan) statements alike; and a one-hour window
 * deep in the history reads about as many buffers as a recent one, not every newer event.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createDb, type Db } from '../../infra/postgres/database.js';
import { createPrng } from '../../infra/localnet/prng.js';
import { eventsQuery, listEvents, listEventsJson, type EventWhere, type Page } from '../../queries/events/events-query.js';
import type { TimeRange } from '../../queries/events/params.js';
import type { JsonText } from '../../infra/postgres/text-query.js';

const EVENTS = 300_000;
const T0 = 1_700_000_000;
/** two events a slot and a second of block time per slot, as archive.ts generates them */
const END = T0 + EVENTS / 2;

interface Row { id: string; slot: number; seq: number; blockTime: number | null }

describe('events in a time window, over a large archive', function () {
  this.timeout(300_000);
  let env: TestEnv;
  let named: Db;
  let rows: Row[];
  const rng = createPrng('events-time-window');
  const int = (lo: number, hi: number) => rng.between(lo, hi);

  before(async () => {
    env = await createTestEnv('events-time-window');
    named = createDb(env.dbUrl, 2, `${env.name}-named`, { namedStatements: true });
    // Every 997th event has its block time an hour behind its slot's, every 1499th a day
    // ahead, every 4001st none: block time is not monotonic in slot.
    await sql`
      INSERT INTO events (id, name, signature, slot, block_time, ix_path, event_index, data)
      SELECT 'e' || g, CASE WHEN g % 5 = 0 THEN 'PaymentPolicyCreated' ELSE 'PaymentRecord' END, 's' || g, 1000 + g / 2,
        CASE WHEN g % 4001 = 0 THEN NULL WHEN g % 997 = 0 THEN ${T0} + g / 2 - 3600 WHEN g % 1499 = 0 THEN ${T0} + g / 2 + 86400 ELSE ${T0} + g / 2 END,
        '0', 0, jsonb_build_object('amount', (1000 + g % 9000)::text, 'gateway', md5('g' || (g % 100)))
      FROM generate_series(0, ${EVENTS - 1}) g`.execute(env.db);
    await sql`VACUUM ANALYZE events`.execute(env.db);
    rows = (await sql<{ id: string; slot: string; seq: string; block_time: string | null }>`SELECT id, slot, seq, block_time FROM events`.execute(env.db))
      .rows.map((r) => ({ id: r.id, slot: Number(r.slot), seq: Number(r.seq), blockTime: r.block_time === null ? null : Number(r.block_time) }));
    rows.sort((a, b) => b.slot - a.slot || b.seq - a.seq);
  });
  after(async () => {
    await named?.destroy();
    await env?.close();
  });

  const expected = (time: TimeRange, page: Page): string[] => rows
    .filter((r) => r.blockTime !== null && (time.from === undefined || r.blockTime >= time.from) && (time.to === undefined || r.blockTime <= time.to))
    .slice(page.offset, page.offset + page.limit).map((r) => r.id);
  const idsOf = (json: JsonText): string[] => (JSON.parse(json.toString()) as { id: string }[]).map((e) => e.id);

  /** Windows of every kind: narrow, an hour, a day, a month-like span, open-ended, at any depth. */
  function windows(): { time: TimeRange; page: Page }[] {
    const out: { time: TimeRange; page: Page }[] = [];
    const page = (): Page => ({ limit: rng.pick([1, 10, 100, 500]), offset: rng.pick([0, 0, 7, 100, 3000]) });
    for (let i = 0; i < 12; i++) {
      const t = int(T0 - 100, END + 100);
      out.push({ time: { from: t, to: t + [0, 1, 60, 3600][i % 4]! }, page: page() });
    }
    for (let i = 0; i < 6; i++) {
      const t = int(T0, END);
      out.push({ time: { from: t, to: t + int(20_000, 120_000) }, page: page() });
      out.push({ time: { from: t }, page: page() });
      out.push({ time: { to: t }, page: page() });
    }
    const deep = T0 + 1000;
    out.push(
      { time: { from: deep, to: deep + 3600 }, page: { limit: 100, offset: 0 } },
      { time: { from: END - 3600, to: END }, page: { limit: 100, offset: 0 } },
      { time: { from: END - 3600 }, page: { limit: 100, offset: 50 } },
      { time: { from: T0 }, page: { limit: 100, offset: 0 } },
      { time: { to: T0 + 10 }, page: { limit: 100, offset: 0 } },
      { time: { from: END + 3600, to: END + 90_000 }, page: { limit: 100, offset: 0 } }, // only the day-ahead events
      { time: { from: END + 200_000 }, page: { limit: 100, offset: 0 } }, // empty
      { time: { from: T0 + 5000, to: T0 + 5000 }, page: { limit: 100, offset: 0 } },
      { time: { from: END - 5250 }, page: { limit: 1000, offset: 10_000 } }, // the page ends past the window's probe
      { time: { from: T0 + 9000, to: T0 + 20_000 }, page: { limit: 1000, offset: 10_000 } },
    );
    return out;
  }

  it('every page equals the one computed from the whole table, through plain and named statements', async () => {
    const cases = windows();
    for (const db of [env.db, named]) {
      // named statements reach a generic plan after five runs of a text: run each shape more
      for (let round = 0; round < 2; round++) {
        for (const { time, page } of cases) {
          const got = idsOf(await listEventsJson(db, { time }, page));
          expect(got, `${JSON.stringify(time)} ${JSON.stringify(page)}`).to.deep.equal(expected(time, page));
        }
      }
    }
  });

  it('other conditions combine with the window (objects, as commands read them)', async () => {
    const t = T0 + 40_000;
    const where: EventWhere = { time: { from: t, to: t + 3600 }, name: 'PaymentPolicyCreated' };
    const got = (await listEvents(env.db, where, { limit: 50, offset: 10 })).map((e) => e.id);
    const want = rows.filter((r) => r.blockTime !== null && r.blockTime >= t && r.blockTime <= t + 3600 && Number(r.id.slice(1)) % 5 === 0)
      .slice(10, 60).map((r) => r.id);
    expect(got).to.deep.equal(want);
  });

  /** Shared buffers (hit + read) the page's statement touches, under the given plan cache mode. */
  async function buffersOf(time: TimeRange, mode: 'force_custom_plan' | 'force_generic_plan', page: Page = { limit: 100, offset: 0 }): Promise<number> {
    const { sql: text, parameters } = eventsQuery(env.db, { time }, page).compile();
    const client = new pg.Client({ connectionString: env.dbUrl });
    await client.connect();
    try {
      await client.query(`SET plan_cache_mode = ${mode}`);
      await client.query(`PREPARE page AS ${text}`);
      const args = parameters.map((p) => `'${String(p)}'`).join(', ');
      const res = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE page(${args})`);
      const plan = res.rows[0]!['QUERY PLAN'][0].Plan;
      return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
    } finally {
      await client.end();
    }
  }

  it('a one-hour window deep in the history reads about what a recent one reads, not every newer event', async () => {
    const pages = Number((await sql<{ n: string }>`SELECT relpages AS n FROM pg_class WHERE relname = 'events'`.execute(env.db)).rows[0]!.n);
    for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
      const recent = await buffersOf({ from: END - 7200, to: END - 3600 }, mode);
      const deep = await buffersOf({ from: T0 + 1000, to: T0 + 4600 }, mode);
      // the window's 7,200 rows fill about 5% of the table's pages; the slot walk read them all
      expect(deep, `${mode}: deep ${deep} vs recent ${recent} buffers, table ${pages} pages`).to.be.below(Math.max(2 * recent, pages / 10));
      // an open window of 10,500 rows with a page ending at 11,000 must not walk the history below it
      const pastProbe = await buffersOf({ from: END - 5250 }, mode, { limit: 1000, offset: 10_000 });
      expect(pastProbe, `${mode}: a page past the probe ${pastProbe} buffers`).to.be.below(pages / 10);
    }
  });
});
