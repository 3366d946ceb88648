/**
 * The webhooks projection writes the delivery outbox: one row per (event, active webhook
 * of the gateway the event concerns), in the runner's transaction, so an event's
 * deliveries exist exactly when its checkpoint has moved past it: none lost, none twice
 * (the runner's dedup, and the (webhook, event) key behind it). Delivery workers take the
 * rows from there (commands/webhooks/delivery/worker.ts); a NOTIFY, sent at commit, wakes them.
 *
 * A webhook matches a gateway account G when it was registered under G itself or under
 * G's authority (its gateway_account = PDA("gateway", authority) = G). Which gateway an
 * event concerns: ./concerns.ts.
 *
 * Not replayable: replaying would deliver history again. The payload is the event as the
 * events API returns it (queries/events toApiEvent), built here from the stream's copy.
 */
import { sql } from 'kysely';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { toApiEvent } from '../../src/kernel/wire/api-event.js';
import type { Projection, ProjectionIo, Trx } from '../runner/projection.js';
import { concernOf, createdPolicy, type PolicyKind } from './concerns.js';
import { OUTBOX_CHANNEL, webhookPoppersKey, webhookReadyKey } from '../../src/kernel/names/index.js';
import { READY_LIST_MAX, type ReadyEntry } from '../../src/kernel/wire/webhook-ready.js';

/** The channel workers LISTEN on. NOTIFY is per database, so test databases never cross. */
export { OUTBOX_CHANNEL };

/** policy rows per insert statement */
const CHUNK = 5000;

/** The event as GET /v1/events returns it. */
export function apiEventOf(e: TributaryEvent) {
  return toApiEvent({
    id: e.id,
    name: e.name,
    signature: e.signature,
    slot: String(e.slot),
    block_time: e.blockTime === null ? null : String(e.blockTime),
    ix_path: e.ixPath,
    event_index: e.index,
    data: e.data,
  });
}

async function rememberPolicies(trx: Trx, pda: PdaDeriver, events: readonly TributaryEvent[]): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for (const e of events) {
    const p = createdPolicy(e, pda);
    if (p) map.set(p.policy, p.gateway);
  }
  const rows = [...map].map(([policy, gateway]) => ({ policy, gateway }));
  for (let i = 0; i < rows.length; i += CHUNK) {
    await trx.insertInto('webhook_policy_gateways').values(rows.slice(i, i + CHUNK))
      .onConflict((oc) => oc.column('policy').doUpdateSet({ gateway: (eb) => eb.ref('excluded.gateway') }))
      .execute();
  }
  return map;
}

/** Gateways of policies this batch did not create: the projection's map, then the policies read models. */
async function resolvePolicies(trx: Trx, wanted: Map<string, PolicyKind>, known: Map<string, string>): Promise<void> {
  const missing = () => [...wanted.keys()].filter((p) => !known.has(p));
  if (missing().length === 0) return;
  for (const r of await trx.selectFrom('webhook_policy_gateways').select(['policy', 'gateway']).where('policy', 'in', missing()).execute()) {
    known.set(r.policy, r.gateway);
  }
  for (const kind of ['payment', 'composable'] as const) {
    const left = missing().filter((p) => wanted.get(p) === kind);
    if (left.length === 0) continue;
    const table = kind === 'payment' ? 'payment_policies' : 'composable_policies';
    for (const r of await trx.selectFrom(table).select(['address', 'gateway']).where('address', 'in', left).execute()) {
      known.set(r.address, r.gateway);
    }
  }
}

/** A webhook as the fan-out needs it. */
interface Hook { id: number; gateway_pubkey: string; gateway_account: string; event_types: string[] | null; direct: boolean }

/** What a batch queued, for the fast path after commit. */
type Pushable = Map<string, ReadyEntry>;

/** `pushLeaseMs`: lease the pushed rows for that long; undefined: no worker pops, push nothing. */
async function fanOut(trx: Trx, pda: PdaDeriver, events: readonly TributaryEvent[], pushLeaseMs: number | undefined): Promise<Pushable | undefined> {
  const policies = await rememberPolicies(trx, pda, events);
  const concerns = events.map((e) => concernOf(e, pda));
  const wanted = new Map<string, PolicyKind>();
  for (const c of concerns) if (c.kind === 'policy') wanted.set(c.policy, c.policyKind);
  await resolvePolicies(trx, wanted, policies);

  const gatewayOf = concerns.map((c) => (c.kind === 'gateway' ? c.gateway : c.kind === 'policy' ? policies.get(c.policy) : undefined));
  const gateways = [...new Set(gatewayOf.filter((g): g is string => g !== undefined))];
  if (gateways.length === 0) return undefined;
  // `direct`: the claim need not arbitrate this endpoint's first attempts (./doc.ts)
  const { rows: hooks } = await sql<Hook>`
    SELECT id, gateway_pubkey, gateway_account, event_types,
      (NOT ordered AND rate_limit_per_second IS NULL AND failing_since IS NULL AND (paused_until IS NULL OR paused_until <= now())) AS direct
    FROM webhooks
    WHERE active AND (gateway_pubkey = ANY (${gateways}::text[]) OR gateway_account = ANY (${gateways}::text[]))`.execute(trx);
  if (hooks.length === 0) return undefined;
  const byGateway = new Map<string, number[]>();
  const hookById = new Map(hooks.map((h) => [h.id, h]));
  const wants = new Map(hooks.map((h) => [h.id, h.event_types === null ? undefined : new Set(h.event_types)]));
  for (const h of hooks) {
    for (const g of new Set([h.gateway_pubkey, h.gateway_account])) byGateway.set(g, [...(byGateway.get(g) ?? []), h.id]);
  }

  // Each event's payload is serialized, sent and stored once, however many webhooks it goes
  // to: the outbox rows are (webhook, event index) pairs joined to the events in the
  // statement; the webhooks of an event the fast path takes are one fan-out row.
  const queued: QueuedEvents = { ids: [], names: [], payloads: [], timestamps: [], fanouts: [] };
  const rowWebhooks: number[] = [];
  const rowEvents: number[] = [];
  events.forEach((e, i) => {
    const g = gatewayOf[i];
    const ids = g === undefined ? undefined : byGateway.get(g);
    if (!ids) return;
    let index: number | undefined;
    let fanned: number[] | undefined;
    for (const id of new Set(ids)) {
      if (wants.get(id)?.has(e.name) === false) continue; // the endpoint's event_types leave it out
      if (index === undefined) {
        const payload = apiEventOf(e);
        index = queued.ids.push(e.id);
        queued.names.push(e.name);
        queued.payloads.push(JSON.stringify(payload));
        queued.timestamps.push(typeof payload.timestamp === 'string' ? payload.timestamp : null);
        fanned = [];
        queued.fanouts.push(fanned);
      }
      if (pushLeaseMs !== undefined && hookById.get(id)!.direct) {
        fanned!.push(id);
      } else {
        rowWebhooks.push(id);
        rowEvents.push(index);
      }
    }
  });
  if (queued.ids.length === 0) return undefined;
  // filtered above, with the webhooks read in this transaction: the outbox trigger may skip its lookup
  if (rowWebhooks.length > 0) await sql`SELECT set_config('tributary.outbox_filtered', 'on', true)`.execute(trx);
  const pushable: Pushable = new Map();
  const { fanouts, queuedRows } = await insertQueued(trx, queued, rowWebhooks, rowEvents, pushLeaseMs ?? 0);
  for (const f of fanouts) {
    const ev = f.ev - 1;
    pushable.set(f.id, { f: f.id, e: f.event_id, n: queued.names[ev]!, p: queued.payloads[ev]!, t: queued.timestamps[ev]!, c: f.created_at, u: Number(f.lease_until), w: queued.fanouts[ev]! });
  }
  // Delivered to listeners at commit, and only if the transaction commits: the claim's rows only.
  if (queuedRows > 0) await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
  return pushable.size > 0 ? pushable : undefined;
}

/** The events of a batch that go to webhooks (1-based indexes in the rows), each with the webhooks it is fanned out to. */
interface QueuedEvents { ids: string[]; names: string[]; payloads: string[]; timestamps: (string | null)[]; fanouts: number[][] }

interface FanoutRow { id: string; event_id: string; created_at: string; lease_until: string }

/**
 * One statement: the events' payloads to webhook_events, once each, with the webhooks they
 * were queued for (retention's way back to their rows); the outbox rows in the given order
 * (stream order: ordered endpoints rely on it), each a webhook and the 1-based index of
 * its event; and one fan-out row (migration 0996) per event with webhooks on the fast
 * path, leased for their first attempts (./doc.ts). Array parameters whatever the row
 * count: a VALUES list of 1,000 rows took twice as long, most of it in building, sending
 * and parsing 4,000 parameters with 10 copies of each payload.
 */
async function insertQueued(trx: Trx, events: QueuedEvents, webhookIds: number[], eventIndexes: number[], leaseMs: number): Promise<{ fanouts: (FanoutRow & { ev: number })[]; queuedRows: number }> {
  const fanEvents: number[] = [];
  const fanHooks: string[] = [];
  events.fanouts.forEach((hooks, i) => {
    if (hooks.length === 0) return;
    fanEvents.push(i + 1);
    fanHooks.push(`{${hooks.join(',')}}`);
  });
  const { rows } = await sql<FanoutRow & { queued: string | null }>`
    WITH r AS (
      SELECT * FROM unnest(${webhookIds}::integer[], ${eventIndexes}::integer[]) WITH ORDINALITY AS r(webhook_id, ev, n)
    ),
    f AS (
      SELECT ev, hooks::integer[] AS hooks FROM unnest(${fanEvents}::integer[], ${fanHooks}::text[]) AS f(ev, hooks)
    ),
    e AS (
      SELECT * FROM unnest(${events.ids}::text[], ${events.names}::text[], ${events.payloads}::json[]) WITH ORDINALITY AS e(id, name, payload, ev)
    ),
    stored AS (
      INSERT INTO webhook_events (event_id, payload, webhook_ids)
      SELECT e.id, e.payload, w.ids FROM e JOIN (
        SELECT ev, array_agg(webhook_id) AS ids FROM (SELECT ev, webhook_id FROM r UNION ALL SELECT ev, unnest(hooks) FROM f) x GROUP BY ev
      ) w USING (ev)
      ON CONFLICT (event_id) DO UPDATE
        SET webhook_ids = ARRAY(SELECT DISTINCT unnest(webhook_events.webhook_ids || excluded.webhook_ids))
    ),
    queued AS (
      INSERT INTO webhook_deliveries AS d (webhook_id, event_id, event_name, payload)
      SELECT r.webhook_id, e.id, e.name, NULL FROM r JOIN e USING (ev)
      ORDER BY r.n
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING 1
    ),
    fanned AS (
      INSERT INTO webhook_fanouts (event_id, event_name, webhook_ids, lease_until)
      SELECT e.id, e.name, f.hooks, now() + ${leaseMs} * interval '1 millisecond' FROM f JOIN e USING (ev)
      ORDER BY f.ev
      RETURNING id, event_id, created_at, lease_until
    )
    SELECT id::text, event_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
      (extract(epoch FROM lease_until) * 1000)::bigint::text AS lease_until, NULL AS queued
    FROM fanned
    UNION ALL SELECT NULL, NULL, NULL, NULL, count(*)::text FROM queued`.execute(trx);
  const index = new Map(events.ids.map((id, i) => [id, i + 1]));
  const fanouts = rows.filter((r) => r.queued === null).map((r) => ({ ...r, ev: index.get(r.event_id)! }));
  return { fanouts, queuedRows: Number(rows.find((r) => r.queued !== null)?.queued ?? 0) };
}

/**
 * After commit: one list entry per event with pushed rows, for the workers to pop. The list
 * is capped (READY_LIST_MAX); what does not make it waits out its lease for the claim.
 */
async function pushReady(io: ProjectionIo, entries: Pushable): Promise<void> {
  const key = webhookReadyKey(io.keys.prefix);
  const values = [...entries.values()].map((e) => JSON.stringify(e));
  await io.redis.multi().rpush(key, ...values).ltrim(key, -READY_LIST_MAX, -1).exec();
}

/** The lease the popping workers ask for, if any pops; asked at most once a second per projection. */
function poppersWatch(): (io: ProjectionIo) => Promise<number | undefined> {
  let known: number | undefined;
  let askedAt = -Infinity;
  return async (io) => {
    const t = Date.now();
    if (t - askedAt < 1000) return known;
    askedAt = t;
    const v = await io.redis.get(webhookPoppersKey(io.keys.prefix)).catch(() => null);
    const ms = Number(v);
    known = v !== null && Number.isInteger(ms) && ms > 0 ? ms : undefined;
    return known;
  };
}

export function createWebhooksProjection(pda: PdaDeriver): Projection {
  const poppers = poppersWatch();
  return {
    name: 'webhooks',
    tables: [
      { name: 'webhook_policy_gateways', orderBy: 'policy' },
      { name: 'webhook_events', orderBy: 'event_id' },
      { name: 'webhook_fanouts', orderBy: 'id', volatile: ['created_at', 'lease_until'] },
      { name: 'webhook_deliveries', orderBy: 'id', volatile: ['status', 'round', 'attempts', 'next_attempt_at', 'locked_until', 'locked_by', 'last_error', 'created_at', 'finished_at'] },
    ],
    replayable: false,
    async apply(trx, events, io) {
      const pushLeaseMs = io === undefined ? undefined : await poppers(io);
      const pushable = await fanOut(trx, pda, events, pushLeaseMs);
      return io && pushable ? () => pushReady(io, pushable) : undefined;
    },
  };
}

export const webhooksProjection = createWebhooksProjection(createPdaDeriver(PROGRAM_ID));
