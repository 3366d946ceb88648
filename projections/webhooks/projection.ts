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
import type { Projection, Trx } from '../runner/projection.js';
import { concernOf, createdPolicy, type PolicyKind } from './concerns.js';
import { OUTBOX_CHANNEL } from '../../src/kernel/keys/index.js';

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

async function fanOut(trx: Trx, pda: PdaDeriver, events: readonly TributaryEvent[]): Promise<number> {
  const policies = await rememberPolicies(trx, pda, events);
  const concerns = events.map((e) => concernOf(e, pda));
  const wanted = new Map<string, PolicyKind>();
  for (const c of concerns) if (c.kind === 'policy') wanted.set(c.policy, c.policyKind);
  await resolvePolicies(trx, wanted, policies);

  const gatewayOf = concerns.map((c) => (c.kind === 'gateway' ? c.gateway : c.kind === 'policy' ? policies.get(c.policy) : undefined));
  const gateways = [...new Set(gatewayOf.filter((g): g is string => g !== undefined))];
  if (gateways.length === 0) return 0;
  const hooks = await trx.selectFrom('webhooks').select(['id', 'gateway_pubkey', 'gateway_account', 'event_types'])
    .where('active', '=', true)
    .where((eb) => eb.or([eb('gateway_pubkey', 'in', gateways), eb('gateway_account', 'in', gateways)]))
    .execute();
  if (hooks.length === 0) return 0;
  const byGateway = new Map<string, number[]>();
  const wants = new Map(hooks.map((h) => [h.id, h.event_types === null ? undefined : new Set(h.event_types)]));
  for (const h of hooks) {
    for (const g of new Set([h.gateway_pubkey, h.gateway_account])) byGateway.set(g, [...(byGateway.get(g) ?? []), h.id]);
  }

  // Each event's payload is serialized and sent once, however many webhooks it goes to:
  // the rows are (webhook, event index) pairs joined to the events in the statement.
  const queued: QueuedEvents = { ids: [], names: [], payloads: [] };
  const rowWebhooks: number[] = [];
  const rowEvents: number[] = [];
  events.forEach((e, i) => {
    const g = gatewayOf[i];
    const ids = g === undefined ? undefined : byGateway.get(g);
    if (!ids) return;
    let index: number | undefined;
    for (const id of new Set(ids)) {
      if (wants.get(id)?.has(e.name) === false) continue; // the endpoint's event_types leave it out
      if (index === undefined) {
        index = queued.ids.push(e.id);
        queued.names.push(e.name);
        queued.payloads.push(JSON.stringify(apiEventOf(e)));
      }
      rowWebhooks.push(id);
      rowEvents.push(index);
    }
  });
  if (rowWebhooks.length === 0) return 0;
  // filtered above, with the webhooks read in this transaction: the outbox trigger may skip its lookup
  await sql`SELECT set_config('tributary.outbox_filtered', 'on', true)`.execute(trx);
  let inserted = 0;
  for (let i = 0; i < rowWebhooks.length; i += CHUNK) {
    inserted += await insertDeliveries(trx, queued, rowWebhooks.slice(i, i + CHUNK), rowEvents.slice(i, i + CHUNK));
  }
  // Delivered to listeners at commit, and only if the transaction commits.
  if (inserted > 0) await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
  return inserted;
}

interface QueuedEvents { ids: string[]; names: string[]; payloads: string[] }

/**
 * One multi-row insert of outbox rows in the given order (stream order: ordered endpoints
 * rely on it), each row a webhook and the 1-based index of its event in `events`. Four
 * array parameters whatever the row count: a VALUES list of 1,000 rows took twice as long,
 * most of it in building, sending and parsing 4,000 parameters with 10 copies of each payload.
 */
async function insertDeliveries(trx: Trx, events: QueuedEvents, webhookIds: number[], eventIndexes: number[]): Promise<number> {
  const r = await sql`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload)
    SELECT r.webhook_id, e.id, e.name, e.payload
    FROM unnest(${webhookIds}::integer[], ${eventIndexes}::integer[]) WITH ORDINALITY AS r(webhook_id, ev, n)
    JOIN unnest(${events.ids}::text[], ${events.names}::text[], ${events.payloads}::json[]) WITH ORDINALITY AS e(id, name, payload, ev)
      USING (ev)
    ORDER BY r.n
    ON CONFLICT (webhook_id, event_id) DO NOTHING`.execute(trx);
  return Number(r.numAffectedRows ?? 0);
}

export function createWebhooksProjection(pda: PdaDeriver): Projection {
  return {
    name: 'webhooks',
    tables: [
      { name: 'webhook_policy_gateways', orderBy: 'policy' },
      { name: 'webhook_deliveries', orderBy: 'id', volatile: ['status', 'round', 'attempts', 'next_attempt_at', 'locked_until', 'locked_by', 'last_error', 'created_at', 'finished_at'] },
    ],
    replayable: false,
    async apply(trx, events) {
      await fanOut(trx, pda, events);
    },
  };
}

export const webhooksProjection = createWebhooksProjection(createPdaDeriver(PROGRAM_ID));
