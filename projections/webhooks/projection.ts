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
import { OUTBOX_CHANNEL, webhookPoppersKey, webhookReadyKey } from '../../src/kernel/keys/index.js';
import { PUSH_HOLDER, READY_LIST_MAX, type ReadyEntry } from './doc.js';

/** The channel workers LISTEN on. NOTIFY is per database, so test databases never cross. */
export { OUTBOX_CHANNEL };

/** outbox rows per insert statement */
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
  // to: the rows are (webhook, event index) pairs joined to the events in the statement.
  const queued: QueuedEvents = { ids: [], names: [], payloads: [], timestamps: [] };
  const rowWebhooks: number[] = [];
  const rowEvents: number[] = [];
  const rowPushed: boolean[] = [];
  events.forEach((e, i) => {
    const g = gatewayOf[i];
    const ids = g === undefined ? undefined : byGateway.get(g);
    if (!ids) return;
    let index: number | undefined;
    for (const id of new Set(ids)) {
      if (wants.get(id)?.has(e.name) === false) continue; // the endpoint's event_types leave it out
      if (index === undefined) {
        const payload = apiEventOf(e);
        index = queued.ids.push(e.id);
        queued.names.push(e.name);
        queued.payloads.push(JSON.stringify(payload));
        queued.timestamps.push(typeof payload.timestamp === 'string' ? payload.timestamp : null);
      }
      rowWebhooks.push(id);
      rowEvents.push(index);
      rowPushed.push(pushLeaseMs !== undefined && hookById.get(id)!.direct);
    }
  });
  if (rowWebhooks.length === 0) return undefined;
  // filtered above, with the webhooks read in this transaction: the outbox trigger may skip its lookup
  await sql`SELECT set_config('tributary.outbox_filtered', 'on', true)`.execute(trx);
  const pushable: Pushable = new Map();
  let claimable = 0;
  for (let i = 0; i < rowWebhooks.length; i += CHUNK) {
    const rows = await insertDeliveries(trx, queued, rowWebhooks.slice(i, i + CHUNK), rowEvents.slice(i, i + CHUNK), rowPushed.slice(i, i + CHUNK), pushLeaseMs ?? 0);
    for (const r of rows) {
      if (!r.pushed) { claimable += 1; continue; }
      const ev = r.ev - 1;
      let entry = pushable.get(r.event_id);
      if (!entry) {
        entry = { e: r.event_id, n: queued.names[ev]!, p: queued.payloads[ev]!, t: queued.timestamps[ev]!, c: r.created_at, u: Number(r.lease_until), d: [] };
        pushable.set(r.event_id, entry);
      }
      entry.d.push([String(r.id), r.webhook_id]);
    }
  }
  // Delivered to listeners at commit, and only if the transaction commits: the claim's rows only.
  if (claimable > 0) await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
  return pushable.size > 0 ? pushable : undefined;
}

interface QueuedEvents { ids: string[]; names: string[]; payloads: string[]; timestamps: (string | null)[] }

interface InsertedRow { id: string; webhook_id: number; event_id: string; pushed: boolean; created_at: string; lease_until: string }

/**
 * One multi-row insert of outbox rows in the given order (stream order: ordered endpoints
 * rely on it), each row a webhook and the 1-based index of its event in `events`; the
 * events' payloads go to webhook_events, once each, with the webhooks they were queued
 * for (retention's way back to their rows). Array parameters whatever the row count: a
 * VALUES list of 1,000 rows took twice as long, most of it in building, sending and
 * parsing 4,000 parameters with 10 copies of each payload. A pushed row is leased to the
 * fast path (./doc.ts) until its first attempt's lease ends.
 */
async function insertDeliveries(trx: Trx, events: QueuedEvents, webhookIds: number[], eventIndexes: number[], pushed: boolean[], leaseMs: number): Promise<(InsertedRow & { ev: number })[]> {
  const { rows } = await sql<InsertedRow>`
    WITH r AS (
      SELECT * FROM unnest(${webhookIds}::integer[], ${eventIndexes}::integer[], ${pushed}::boolean[]) WITH ORDINALITY AS r(webhook_id, ev, pushed, n)
    ),
    e AS (
      SELECT * FROM unnest(${events.ids}::text[], ${events.names}::text[], ${events.payloads}::json[]) WITH ORDINALITY AS e(id, name, payload, ev)
    ),
    stored AS (
      INSERT INTO webhook_events (event_id, payload, webhook_ids)
      SELECT e.id, e.payload, w.ids FROM e JOIN (SELECT ev, array_agg(webhook_id) AS ids FROM r GROUP BY ev) w USING (ev)
      ON CONFLICT (event_id) DO UPDATE
        SET webhook_ids = ARRAY(SELECT DISTINCT unnest(webhook_events.webhook_ids || excluded.webhook_ids))
    )
    INSERT INTO webhook_deliveries AS d (webhook_id, event_id, event_name, payload, next_attempt_at, locked_until, locked_by)
    SELECT r.webhook_id, e.id, e.name, NULL,
      CASE WHEN r.pushed THEN now() + ${leaseMs} * interval '1 millisecond' ELSE now() END,
      CASE WHEN r.pushed THEN now() + ${leaseMs} * interval '1 millisecond' END,
      CASE WHEN r.pushed THEN ${PUSH_HOLDER} END
    FROM r JOIN e USING (ev)
    ORDER BY r.n
    ON CONFLICT (webhook_id, event_id) DO NOTHING
    RETURNING d.id, d.webhook_id, d.event_id, (d.locked_by IS NOT NULL) AS pushed,
      to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
      (extract(epoch FROM d.locked_until) * 1000)::bigint::text AS lease_until`.execute(trx);
  const index = new Map(events.ids.map((id, i) => [id, i + 1]));
  return rows.map((r) => ({ ...r, ev: index.get(r.event_id)! }));
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
