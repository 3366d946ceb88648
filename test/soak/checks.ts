/**
 * What the soak proves once the workload has ended and the pipeline has drained:
 * the archive is the chain's ledger (none lost, none twice); every read model equals a
 * clean replay of the archive; every outbox row reached its receiver at least once; every
 * client got every payment of the trackingIds it follows.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import type { LedgerReceiver } from './webhooks.js';
import type { SoakClient } from './sockets.js';
import { dataOf } from '../support/anchor-events.js';

export interface Check { name: string; ok: boolean; detail: string }

export async function archiveCheck(db: Db, ledger: readonly TributaryEvent[]): Promise<Check> {
  const rows = await sql<{ id: string; n: string }>`SELECT id, count(*)::text AS n FROM events GROUP BY id`.execute(db);
  const archived = new Map(rows.rows.map((r) => [r.id, Number(r.n)]));
  const want = new Set(ledger.map((e) => e.id));
  const missing = [...want].filter((id) => !archived.has(id)).length;
  const extra = [...archived.keys()].filter((id) => !want.has(id)).length;
  const twice = [...archived.values()].filter((n) => n > 1).length;
  const total = [...archived.values()].reduce((a, n) => a + n, 0);
  return {
    name: 'archive = ledger', ok: missing === 0 && extra === 0 && twice === 0 && want.size === ledger.length,
    detail: `ledger ${ledger.length} events, archive ${total} rows; missing ${missing}, not on the chain ${extra}, twice ${twice}`,
  };
}

const rowJson = (t: { volatile?: readonly string[] }) => {
  const drop = (t.volatile ?? []).map((c) => sql`- ${c}::text`);
  return sql`(to_jsonb(x) ${sql.join(drop, sql` `)})`;
};

/**
 * Each replayable read model against a clean replay. The live tables are kept aside
 * first (soak_live_<table>), so a difference can be shown row by row afterwards.
 */
export async function readModelChecks(db: Db, report: (line: string) => void): Promise<Check[]> {
  const out: Check[] = [];
  for (const p of PROJECTIONS.filter((x) => x.replayable)) {
    const live = await projectionDigest(db, p);
    for (const t of p.tables) {
      await sql`DROP TABLE IF EXISTS ${sql.table(`soak_live_${t.name}`)}`.execute(db);
      await sql`CREATE TABLE ${sql.table(`soak_live_${t.name}`)} AS SELECT * FROM ${sql.table(t.name)}`.execute(db);
    }
    const replay = await replayProjection(db, p, { waitMs: 120_000 });
    const ok = live === replay.digest;
    const diffs: string[] = [];
    if (!ok) {
      for (const t of p.tables) {
        const j = rowJson(t);
        const onlyLive = await sql<{ r: unknown }>`SELECT ${j} AS r FROM ${sql.table(`soak_live_${t.name}`)} x EXCEPT SELECT ${j} FROM ${sql.table(t.name)} x`.execute(db);
        const onlyReplay = await sql<{ r: unknown }>`SELECT ${j} AS r FROM ${sql.table(t.name)} x EXCEPT SELECT ${j} FROM ${sql.table(`soak_live_${t.name}`)} x`.execute(db);
        if (onlyLive.rows.length + onlyReplay.rows.length === 0) continue;
        diffs.push(`${t.name}: ${onlyLive.rows.length} rows only live, ${onlyReplay.rows.length} only in the replay`);
        for (const r of onlyLive.rows.slice(0, 3)) report(`    live   ${t.name}: ${JSON.stringify(r.r)}`);
        for (const r of onlyReplay.rows.slice(0, 3)) report(`    replay ${t.name}: ${JSON.stringify(r.r)}`);
      }
    }
    out.push({
      name: `read model ${p.name} = replay`, ok,
      detail: `live ${live.slice(0, 12)}, replay of ${replay.events} events ${replay.digest.slice(0, 12)} (${replay.ms} ms)${diffs.length ? `; ${diffs.join('; ')}` : ''}`,
    });
  }
  return out;
}

export async function webhookCheck(db: Db, receivers: readonly LedgerReceiver[]): Promise<Check> {
  const rows = await db.selectFrom('webhook_deliveries').select(['webhook_id', 'event_id', 'status']).execute();
  const byHook = new Map(receivers.map((r) => [r.webhookId, r]));
  let undelivered = 0;
  let notReceived = 0;
  for (const r of rows) {
    if (r.status !== 'delivered') undelivered += 1;
    if (!byHook.get(r.webhook_id)?.received.has(r.event_id)) notReceived += 1;
  }
  let receipts = 0;
  let repeats = 0;
  for (const r of receivers) for (const n of r.received.values()) { receipts += n; repeats += n - 1; }
  return {
    name: 'webhooks delivered', ok: rows.length > 0 && undelivered === 0 && notReceived === 0,
    detail: `outbox ${rows.length} deliveries to ${receivers.length} receivers; not delivered ${undelivered}, never received ${notReceived}; received ${receipts} POSTs (${repeats} repeats, at-least-once)`,
  };
}

/** Payment keys (signature:recordId) per trackingId: PaymentRecord memos and composable policies' memos. */
export function paymentsByTrackingId(ledger: readonly TributaryEvent[]): Map<string, Set<string>> {
  const composableMemo = new Map<string, string>();
  const out = new Map<string, Set<string>>();
  const add = (tid: string | undefined, e: TributaryEvent) => {
    if (!tid) return;
    let s = out.get(tid);
    if (!s) { s = new Set(); out.set(tid, s); }
    s.add(`${e.signature}:${dataOf(e)['record_id'] as number}`);
  };
  for (const e of ledger) {
    if (e.name === 'ComposablePolicyCreated') composableMemo.set(e.data['composable_policy'], e.data['memo']);
    if (e.name === 'PaymentRecord') add(e.data['memo'], e);
    if (e.name === 'ComposableExecuted') add(composableMemo.get(e.data['composable_policy']), e);
  }
  return out;
}

export function socketMissing(clients: readonly SoakClient[], expected: ReadonlyMap<string, ReadonlySet<string>>): { expected: number; missing: number; clientsMissing: number; examples: { client: number; trackingId: string; key: string; connects: number }[] } {
  let want = 0;
  let missing = 0;
  let clientsMissing = 0;
  const examples: { client: number; trackingId: string; key: string; connects: number }[] = [];
  for (const [i, c] of clients.entries()) {
    let mine = 0;
    for (const tid of c.trackingIds) {
      const got = c.received.get(tid);
      for (const k of expected.get(tid) ?? []) {
        want += 1;
        if (!got?.has(k)) {
          missing += 1;
          mine += 1;
          if (examples.length < 50) examples.push({ client: i, trackingId: tid, key: k, connects: c.connects });
        }
      }
    }
    if (mine > 0) clientsMissing += 1;
  }
  return { expected: want, missing, clientsMissing, examples };
}

/** Event name by payment key, to say what kind of payment a client missed. */
export function paymentKinds(ledger: readonly TributaryEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of ledger) if (e.name === 'PaymentRecord' || e.name === 'ComposableExecuted') out.set(`${e.signature}:${e.data['record_id']}`, `${e.name}@slot${e.slot}`);
  return out;
}

export function socketCheck(clients: readonly SoakClient[], expected: ReadonlyMap<string, ReadonlySet<string>>, kinds: ReadonlyMap<string, string>): Check {
  const m = socketMissing(clients, expected);
  const byKind = new Map<string, number>();
  for (const x of m.examples) { const k = (kinds.get(x.key) ?? '?').split('@')[0]!; byKind.set(k, (byKind.get(k) ?? 0) + 1); }
  const sample = m.examples.slice(0, 6).map((x) => `client ${x.client} (${x.connects} connections) ${x.trackingId} ${kinds.get(x.key) ?? x.key}`);
  const followed = new Set(clients.flatMap((c) => c.trackingIds));
  const withPayments = [...followed].filter((t) => (expected.get(t)?.size ?? 0) > 0).length;
  return {
    name: 'sockets got every payment', ok: m.missing === 0 && m.expected > 0,
    detail: `${clients.length} clients, ${followed.size} trackingIds (${withPayments} with payments); ${m.expected} (client, payment) pairs expected, ${m.missing} missing on ${m.clientsMissing} clients${m.missing ? ` (by kind ${JSON.stringify(Object.fromEntries(byKind))}; e.g. ${sample.join('; ')})` : ''}`,
  };
}
