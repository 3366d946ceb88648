/** SQL of webhook registrations. Deleting a webhook deletes its outbox rows and attempts (FK cascade). */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { WebhooksTable } from './tables.js';
import type { SecretColumn } from '../../infra/secrets/columns.js';
import { secretAad } from './secret-aad.js';

/** A webhook's sealed signing secret (an inactive webhook's too: reactivating it signs again). */
export const WEBHOOK_SECRETS: SecretColumn = {
  kind: 'webhook secret', table: 'webhooks', id: 'id', column: 'secret',
  aad: (id) => secretAad(Number(id)),
  inUse: () => sql`TRUE`,
};

/** A rotated-out webhook secret, which signs beside the new one until its grace period ends. */
export const WEBHOOK_PREVIOUS_SECRETS: SecretColumn = {
  kind: 'webhook previous secret', table: 'webhooks', id: 'id', column: 'previous_secret',
  aad: (id) => secretAad(Number(id)),
  inUse: (nowMs) => sql`previous_secret_until > ${new Date(nowMs)}`,
};

/** The columns a registration is read with (never its secrets or delivery state). */
export type WebhookRow = Pick<Selectable<WebhooksTable>,
  'id' | 'gateway_pubkey' | 'gateway_account' | 'endpoint_url' | 'active' | 'event_types' | 'ordered'
  | 'rate_limit_per_second' | 'disabled_reason' | 'previous_secret_until' | 'created_at' | 'updated_at'>;

export interface Page { limit: number; offset: number }

export const COLUMNS = [
  'id', 'gateway_pubkey', 'gateway_account', 'endpoint_url', 'active', 'event_types', 'ordered', 'rate_limit_per_second',
  'disabled_reason', 'previous_secret_until', 'created_at', 'updated_at',
] as const;

/** The settings an endpoint chooses; undefined leaves a setting as it is. */
export interface EndpointSettings {
  /** null = every type */
  eventTypes?: string[] | null;
  ordered?: boolean;
  /** null = no limit */
  rateLimitPerSecond?: number | null;
}

const settingValues = (s: EndpointSettings) => ({
  ...(s.eventTypes !== undefined ? { event_types: s.eventTypes } : {}),
  ...(s.ordered !== undefined ? { ordered: s.ordered } : {}),
  ...(s.rateLimitPerSecond !== undefined ? { rate_limit_per_second: s.rateLimitPerSecond } : {}),
});

export interface NewWebhook {
  gatewayPubkey: string;
  gatewayAccount: string;
  endpointUrl: string;
  active: boolean;
  now: Date;
  settings: EndpointSettings;
  /** the most webhooks one gateway_pubkey may have */
  maxPerGateway: number;
  /** seals the secret for the id the row gets (the id is the secret's associated data) */
  sealSecret(id: number): string;
}

export type InsertResult = { kind: 'created'; row: WebhookRow } | { kind: 'duplicate' } | { kind: 'full' };

/** Inserts a webhook unless the gateway already has one for that URL, or has as many as it may. */
export async function insertWebhook(db: Db, w: NewWebhook): Promise<InsertResult> {
  return db.transaction().execute(async (trx) => {
    // one creation at a time per gateway, so two at once cannot both pass the count
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`webhooks:${w.gatewayPubkey}`}))`.execute(trx);
    const { count } = await trx.selectFrom('webhooks').select((eb) => eb.fn.countAll<string>().as('count'))
      .where('gateway_pubkey', '=', w.gatewayPubkey).executeTakeFirstOrThrow();
    if (Number(count) >= w.maxPerGateway) return { kind: 'full' };
    const { rows } = await sql<{ id: string }>`SELECT nextval(pg_get_serial_sequence('webhooks', 'id')) AS id`.execute(trx);
    const id = Number(rows[0]!.id);
    const row = await trx.insertInto('webhooks')
      .values({
        id, gateway_pubkey: w.gatewayPubkey, gateway_account: w.gatewayAccount, endpoint_url: w.endpointUrl,
        active: w.active, secret: w.sealSecret(id), created_at: w.now, updated_at: w.now, ...settingValues(w.settings),
      })
      .onConflict((oc) => oc.columns(['gateway_pubkey', 'endpoint_url']).doNothing())
      .returning(COLUMNS)
      .executeTakeFirst();
    return row ? { kind: 'created', row } : { kind: 'duplicate' };
  });
}

export async function findWebhook(db: Db, id: number): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

export async function listWebhooks(db: Db, f: { gatewayPubkey?: string; activeOnly: boolean }, page: Page): Promise<WebhookRow[]> {
  let q = db.selectFrom('webhooks').select(COLUMNS);
  if (f.gatewayPubkey !== undefined) q = q.where('gateway_pubkey', '=', f.gatewayPubkey);
  if (f.activeOnly) q = q.where('active', '=', true);
  return q.orderBy('id').limit(page.limit).offset(page.offset).execute();
}

/**
 * Activates or deactivates a webhook and applies its settings. Reactivating clears what
 * disabled it (the reason, the failure streak, a receiver's pause): a fresh start.
 */
export async function updateEndpoint(db: Db, id: number, active: boolean, settings: EndpointSettings, now: Date, reactivate: boolean): Promise<WebhookRow | undefined> {
  const fresh = reactivate
    ? { disabled_reason: null, failing_since: null, last_failure_at: null, failure_count: 0, paused_until: null }
    : {};
  return db.updateTable('webhooks')
    .set({ active, updated_at: now, ...settingValues(settings), ...fresh })
    .where('id', '=', id).returning(COLUMNS).executeTakeFirst();
}

export async function deleteWebhook(db: Db, id: number): Promise<number> {
  const r = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function deleteGatewayWebhooks(db: Db, gatewayPubkey: string): Promise<number> {
  const r = await db.deleteFrom('webhooks').where('gateway_pubkey', '=', gatewayPubkey).executeTakeFirst();
  return Number(r.numDeletedRows);
}
