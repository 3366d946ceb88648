/**
 * Webhook management: validation, who may act for which gateway, the signing secret.
 *
 * Authorization. A gateway JWT's subject is the gateway account G (gateway sign-in). A
 * webhook's gateway_pubkey is, per SPEC, the gateway authority's key; the gateway account
 * is refused with a 400 (gateway-key.ts). The token may act for gateway_pubkey K when
 * PDA("gateway", K) = G (K is G's authority), or K = G (rows registered under the
 * account before it was refused, reached by id); no read model is consulted, so a
 * gateway signed in a moment ago is never refused for lag. The admin key may act for any.
 */
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { RequestAuth } from '../../src/kernel/auth/gateway-token.js';
import { conflict, forbidden, invalid, notFound } from '../../src/kernel/http/errors.js';
import { refuseUrlControls } from '../../src/kernel/http/url-input.js';
import { base58Input } from '../../src/kernel/http/base58-input.js';
import type { Db } from '../../infra/postgres/database.js';
import { checkTarget, TargetRefused, type Resolver } from '../../infra/http/ssrf-guard.js';
import { newSigningSecret } from './delivery/signer.js';
import { sealSecret } from '../../infra/crypto/secret-box.js';
import { secretAad } from './secret-aad.js';
import {
  deleteGatewayWebhooks, deleteWebhook, findWebhook, insertWebhook, listWebhooks, updateEndpoint,
  type EndpointSettings, type Page, type WebhookRow,
} from './store.js';
import { listAttempts, type AttemptRow } from './attempts-query.js';
import { refuseGatewayAccount } from './gateway-key.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';

export interface WebhookDeps {
  db: Db;
  pda: PdaDeriver;
  now: () => number;
  encryptionKey: Buffer | undefined;
  allowPrivateTargets: boolean;
  maxPerGateway: number;
  resolve?: Resolver;
  /** gateway account → its keys (undefined when the key is no gateway account) */
  gatewayOf: GatewayLookup;
}

/** SPEC's Webhook: the row's columns, its times as ISO strings, the account it stands for left out. */
export type Webhook = Omit<WebhookRow, 'gateway_account' | 'previous_secret_until' | 'created_at' | 'updated_at'> & {
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
};

export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  gateway_pubkey: r.gateway_pubkey,
  endpoint_url: r.endpoint_url,
  active: r.active,
  event_types: r.event_types,
  ordered: r.ordered,
  rate_limit_per_second: r.rate_limit_per_second,
  disabled_reason: r.disabled_reason,
  previous_secret_expires_at: r.previous_secret_until?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** A base58 string that decodes to exactly 32 bytes, or a 400. */
export function checkPublicKey(value: string, field: string): void {
  base58Input(value, field, 32, (n) => `${field} must decode to a 32-byte public key (got ${n} bytes)`);
}

/**
 * An absolute http(s) URL without credentials, accepted by the SSRF guard, or a 400; the
 * answer is the parsed URL (`href`), which is what is stored and compared, so spellings of
 * one URL (a case, a default port, a dot segment) are one endpoint. A control character or
 * surrounding whitespace is refused rather than dropped: the parser would remove it
 * silently, and the URL stored would not be the one given.
 */
export async function checkEndpointUrl(deps: WebhookDeps, value: string): Promise<string> {
  refuseUrlControls(value, 'endpoint_url');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('endpoint_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('endpoint_url must be an http or https URL');
  if (url.username !== '' || url.password !== '') throw invalid('endpoint_url must not carry credentials');
  if (!deps.allowPrivateTargets) {
    try {
      await checkTarget(url, deps.resolve);
    } catch (err) {
      if (err instanceof TargetRefused) throw invalid(`endpoint_url ${err.message}`);
      throw err;
    }
  }
  return url.href;
}

export function mayActFor(deps: Pick<WebhookDeps, 'pda'>, auth: RequestAuth, gatewayPubkey: string): boolean {
  if (auth.kind === 'admin') return true;
  const g = auth.claims.gateway;
  return g === gatewayPubkey || deps.pda.gateway(gatewayPubkey) === g;
}

export function authorize(deps: Pick<WebhookDeps, 'pda'>, auth: RequestAuth, gatewayPubkey: string): void {
  if (!mayActFor(deps, auth, gatewayPubkey)) throw forbidden(`this token may not act for gateway ${gatewayPubkey}`);
}

/** An endpoint's delivery settings as the API spells them (validated by the route's schema). */
export interface SettingsInput { event_types?: string[] | null; ordered?: boolean; rate_limit_per_second?: number | null }

export interface CreateInput extends SettingsInput { gateway_pubkey: string; endpoint_url: string; active: boolean }
export interface UpdateInput extends SettingsInput { active: boolean }

export const settingsOf = (i: SettingsInput): EndpointSettings => ({
  // sorted: the stored list reads the same whatever order it was given in
  ...(i.event_types !== undefined ? { eventTypes: i.event_types === null ? null : [...i.event_types].sort() } : {}),
  ...(i.ordered !== undefined ? { ordered: i.ordered } : {}),
  ...(i.rate_limit_per_second !== undefined ? { rateLimitPerSecond: i.rate_limit_per_second } : {}),
});

export async function createWebhook(deps: WebhookDeps, auth: RequestAuth, input: CreateInput): Promise<Webhook & { secret: string }> {
  checkPublicKey(input.gateway_pubkey, 'gateway_pubkey');
  await refuseGatewayAccount(deps.gatewayOf, auth, input.gateway_pubkey, 'gateway_pubkey');
  authorize(deps, auth, input.gateway_pubkey);
  const endpointUrl = await checkEndpointUrl(deps, input.endpoint_url);
  const secret = newSigningSecret();
  const r = await insertWebhook(deps.db, {
    gatewayPubkey: input.gateway_pubkey,
    gatewayAccount: deps.pda.gateway(input.gateway_pubkey),
    endpointUrl,
    active: input.active,
    now: new Date(deps.now()),
    settings: settingsOf(input),
    maxPerGateway: deps.maxPerGateway,
    sealSecret: (id) => sealSecret(secret, secretAad(id), deps.encryptionKey),
  });
  if (r.kind === 'duplicate') throw conflict(`gateway ${input.gateway_pubkey} already has a webhook for ${endpointUrl}`);
  if (r.kind === 'full') throw conflict(`gateway ${input.gateway_pubkey} already has ${deps.maxPerGateway} webhooks, the most allowed (WEBHOOK_MAX_PER_GATEWAY)`);
  return { ...toWebhook(r.row), secret };
}

/** The webhook, if it exists (404) and the caller may see it (403). */
export async function getWebhook(deps: WebhookDeps, auth: RequestAuth, id: number): Promise<WebhookRow> {
  const row = await findWebhook(deps.db, id);
  if (!row) throw notFound(`webhook ${id} not found`);
  authorize(deps, auth, row.gateway_pubkey);
  return row;
}

export async function updateWebhook(deps: WebhookDeps, auth: RequestAuth, id: number, input: UpdateInput): Promise<Webhook> {
  const before = await getWebhook(deps, auth, id);
  const row = await updateEndpoint(deps.db, id, input.active, settingsOf(input), new Date(deps.now()), input.active && !before.active);
  if (!row) throw notFound(`webhook ${id} not found`);
  return toWebhook(row);
}

export async function removeWebhook(deps: WebhookDeps, auth: RequestAuth, id: number): Promise<{ deleted: number }> {
  await getWebhook(deps, auth, id);
  const deleted = await deleteWebhook(deps.db, id);
  if (deleted === 0) throw notFound(`webhook ${id} not found`);
  return { deleted };
}

export async function listAll(deps: WebhookDeps, activeOnly: boolean, page: Page): Promise<Webhook[]> {
  return (await listWebhooks(deps.db, { activeOnly }, page)).map(toWebhook);
}

export async function listOfGateway(deps: WebhookDeps, auth: RequestAuth, gatewayPubkey: string, activeOnly: boolean, page: Page): Promise<Webhook[]> {
  checkPublicKey(gatewayPubkey, 'gatewayPubkey');
  await refuseGatewayAccount(deps.gatewayOf, auth, gatewayPubkey, 'gatewayPubkey');
  authorize(deps, auth, gatewayPubkey);
  return (await listWebhooks(deps.db, { gatewayPubkey, activeOnly }, page)).map(toWebhook);
}

export async function removeGatewayWebhooks(deps: WebhookDeps, auth: RequestAuth, gatewayPubkey: string): Promise<{ deleted: number }> {
  checkPublicKey(gatewayPubkey, 'gatewayPubkey');
  await refuseGatewayAccount(deps.gatewayOf, auth, gatewayPubkey, 'gatewayPubkey');
  authorize(deps, auth, gatewayPubkey);
  return { deleted: await deleteGatewayWebhooks(deps.db, gatewayPubkey) };
}

export interface DeliveryAttempt {
  id: string;
  deliveryId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  attemptedAt: string;
  success: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  deliveryStatus: string;
  nextAttemptAt: string | null;
}

const toAttempt = (r: AttemptRow): DeliveryAttempt => ({
  id: r.id,
  deliveryId: r.delivery_id,
  eventId: r.event_id,
  eventType: r.event_name,
  attempt: r.attempt,
  attemptedAt: r.attempted_at.toISOString(),
  success: r.success,
  statusCode: r.status_code,
  latencyMs: r.latency_ms,
  error: r.error,
  deliveryStatus: r.delivery_status,
  nextAttemptAt: r.delivery_status === 'pending' ? r.next_attempt_at.toISOString() : null,
});

export async function listDeliveries(deps: WebhookDeps, auth: RequestAuth, id: number, page: Page): Promise<DeliveryAttempt[]> {
  await getWebhook(deps, auth, id);
  return (await listAttempts(deps.db, id, page)).map(toAttempt);
}
