/**
 * Creating a checkout session and the merchant's view of it. A session sells one
 * requirement (requirement.ts) once, to whoever opens its page before it expires.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../infra/postgres/database.js';
import { invalid, notFound } from '../../src/kernel/http/errors.js';
import { refuseUrlControls } from '../../src/kernel/http/url-input.js';
import type { AcceptedRequirement } from '../x402/requirements.js';
import { acceptedOf, parseRequirement, type MintAmounts, type RequirementContext } from './requirement.js';
import { findSession, insertSession, statusAt, storedOf, type SessionRow } from './store.js';

export const DEFAULT_EXPIRES_IN_SECONDS = 1800;
export const MIN_EXPIRES_IN_SECONDS = 60;
export const MAX_EXPIRES_IN_SECONDS = 7 * 86_400;
export const SESSION_ID = /^cs_[A-Za-z0-9_-]{24}$/;
/** a trackingId is a policy memo and a Socket.IO room: 64 bytes at most */
const TRACKING_ID_BYTES = 64;

export interface CheckoutDeps { db: Db; amounts: MintAmounts; requirements: RequirementContext; now: () => number }

export interface CreateInput {
  requirement: Record<string, unknown>;
  trackingId: string;
  successUrl: string;
  cancelUrl: string;
  expiresInSeconds?: number;
  label?: string;
}

export interface CreatedSession { id: string; url: string; expiresAt: string }

export const newSessionId = (): string => `cs_${randomBytes(18).toString('base64url')}`;

/** The parsed URL, kept and compared as such; a control character or surrounding whitespace is refused (url-input.ts). */
function httpUrl(v: string, field: string): string {
  refuseUrlControls(v, field);
  try {
    const u = new URL(v);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.toString();
  } catch { /* refused below */ }
  throw invalid(`${field} must be an http or https URL`);
}

/** `pageBase`: where /checkout/{id} is served (PUBLIC_BASE_URL, else the request's origin). */
export async function createSession(deps: CheckoutDeps, gateway: string, body: CreateInput, pageBase: string): Promise<CreatedSession> {
  const successUrl = httpUrl(body.successUrl, 'successUrl');
  const cancelUrl = httpUrl(body.cancelUrl, 'cancelUrl');
  if (Buffer.byteLength(body.trackingId, 'utf8') > TRACKING_ID_BYTES) throw invalid(`trackingId must be at most ${TRACKING_ID_BYTES} bytes`);
  const seconds = body.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS;
  if (!Number.isInteger(seconds) || seconds < MIN_EXPIRES_IN_SECONDS || seconds > MAX_EXPIRES_IN_SECONDS) {
    throw invalid(`expiresInSeconds must be an integer from ${MIN_EXPIRES_IN_SECONDS} to ${MAX_EXPIRES_IN_SECONDS}`);
  }
  const id = newSessionId();
  const url = `${pageBase}/checkout/${id}`;
  // the policy's memo is the trackingId unless the entry names its own: the chain's events then reach the same room
  const raw = { ...body.requirement, memo: body.requirement['memo'] ?? body.trackingId };
  const { stored } = await parseRequirement(raw, gateway, url, deps.requirements, deps.amounts);
  const createdAt = new Date(deps.now());
  const expiresAt = new Date(createdAt.getTime() + seconds * 1000);
  await insertSession(deps.db, {
    id, gateway, requirement: stored, trackingId: body.trackingId, label: body.label ?? null, successUrl, cancelUrl, expiresAt, createdAt,
  });
  return { id, url, expiresAt: expiresAt.toISOString() };
}

export interface MerchantView {
  id: string; status: 'open' | 'complete' | 'expired'; requirement: AcceptedRequirement; trackingId: string; label: string | null;
  successUrl: string; cancelUrl: string; expiresAt: string; createdAt: string;
  completedAt?: string; payer?: string; policy?: string; transaction?: string;
}

export function merchantView(deps: Pick<CheckoutDeps, 'requirements'>, row: SessionRow, now: Date): MerchantView {
  const status = statusAt(row, now);
  return {
    id: row.id, status, requirement: acceptedOf(storedOf(row), deps.requirements, Math.floor(now.getTime() / 1000)),
    trackingId: row.tracking_id, label: row.label, successUrl: row.success_url, cancelUrl: row.cancel_url,
    expiresAt: row.expires_at.toISOString(), createdAt: row.created_at.toISOString(),
    ...(row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
    ...(row.payer ? { payer: row.payer } : {}), ...(row.policy ? { policy: row.policy } : {}),
    ...(row.transaction ? { transaction: row.transaction } : {}),
  };
}

/** The session, if it is `gateway`'s (another gateway's is as unknown as none). */
export async function sessionOf(deps: Pick<CheckoutDeps, 'db'>, id: string, gateway?: string): Promise<SessionRow> {
  const row = SESSION_ID.test(id) ? await findSession(deps.db, id) : undefined;
  if (!row || (gateway !== undefined && row.gateway !== gateway)) throw notFound(`no checkout session ${id}`);
  return row;
}
