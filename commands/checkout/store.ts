/**
 * The checkout_sessions rows. Every change of status is a compare-and-set on the row
 * (UPDATE … WHERE status = …), so among nodes racing for one session exactly one wins:
 * one pay moves it open → paying, one sweep moves it open → expired.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { CheckoutSessionsTable, CheckoutStatus } from './tables.js';
import type { StoredRequirement } from './requirement.js';

export type SessionRow = Selectable<CheckoutSessionsTable>;

/** A paying session left that long (its node died mid-payment) may be paid again. */
export const PAYING_LEASE_SECONDS = 120;

export interface NewSession {
  id: string; gateway: string; requirement: StoredRequirement; trackingId: string; label: string | null;
  successUrl: string; cancelUrl: string; expiresAt: Date; createdAt: Date;
}

export async function insertSession(db: Db, s: NewSession): Promise<void> {
  await db.insertInto('checkout_sessions').values({
    id: s.id, gateway: s.gateway, requirement: JSON.stringify(s.requirement), tracking_id: s.trackingId, label: s.label,
    success_url: s.successUrl, cancel_url: s.cancelUrl, expires_at: s.expiresAt, created_at: s.createdAt, updated_at: s.createdAt,
  }).execute();
}

export async function findSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The stored requirement of a row (jsonb comes back parsed). */
export const storedOf = (row: SessionRow): StoredRequirement => row.requirement as StoredRequirement;

/** The status a reader sees: an open session past its expiry is expired, whether or not the sweep came by yet. */
export function statusAt(row: SessionRow, now: Date): Exclude<CheckoutStatus, 'paying'> {
  if (row.status === 'complete' || row.status === 'expired') return row.status;
  return row.status === 'open' && row.expires_at <= now ? 'expired' : 'open';
}

/** open (unexpired) → paying, or a paying session whose lease ran out; false when another pay holds it or it is done. */
export async function claimForPayment(db: Db, id: string, now: Date): Promise<boolean> {
  const stale = new Date(now.getTime() - PAYING_LEASE_SECONDS * 1000);
  const row = await db.updateTable('checkout_sessions').set({ status: 'paying', updated_at: now })
    .where('id', '=', id).where('expires_at', '>', now)
    .where((eb) => eb.or([eb('status', '=', 'open'), eb.and([eb('status', '=', 'paying'), eb('updated_at', '<', stale)])]))
    .returning('id').executeTakeFirst();
  return row !== undefined;
}

/** paying → open: the payment was refused, nothing landed; the session may be paid again. */
export async function releasePayment(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('checkout_sessions').set({ status: 'open', updated_at: now }).where('id', '=', id).where('status', '=', 'paying').execute();
}
