/**
 * API keys per gateway: `tak_<id>_<secret>`, where `id` (16 hex) is the row's key and
 * `secret` 32 random bytes (base64url). Only SHA-256(key) is stored; a presented key is
 * looked up by its id and compared digest to digest in constant time. Revoked keys stay
 * (revoked_at set) so a listing shows what was revoked and when.
 *
 * A key made with a gateway JWT remembers the wallet that signed in (`created_by`) and, as
 * the JWT itself, acts for the gateway only while that wallet is still the gateway's
 * authority or signer (the facilitator checks it at use): a signer rotated out after a leak
 * takes the keys it minted with it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../infra/postgres/database.js';
import type { ApiKeyOwner } from '../../src/kernel/auth/api-key-lookup.js';

export interface ApiKeyInfo {
  id: string; gateway: string; label: string | null; createdAt: string; revokedAt: string | null;
  /** the wallet whose sign-in created the key (it works while that wallet is the gateway's); null: the administrator */
  createdBy: string | null;
}

const KEY = /^tak_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const digest = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

const info = (r: { id: string; gateway: string; label: string | null; created_at: Date; revoked_at: Date | null; created_by: string | null }): ApiKeyInfo => ({
  id: r.id, gateway: r.gateway, label: r.label, createdAt: r.created_at.toISOString(), revokedAt: r.revoked_at?.toISOString() ?? null, createdBy: r.created_by,
});

/** Creates a key for `gateway`; the returned `key` is the only time it exists in clear. */
export async function createApiKey(db: Db, gateway: string, label: string | null, now: Date, createdBy: string | null): Promise<ApiKeyInfo & { key: string }> {
  const id = randomBytes(8).toString('hex');
  const key = `tak_${id}_${randomBytes(32).toString('base64url')}`;
  const row = await db.insertInto('gateway_api_keys')
    .values({ id, gateway, key_hash: digest(key).toString('hex'), label, created_by: createdBy, created_at: now, revoked_at: null })
    .returningAll().executeTakeFirstOrThrow();
  return { ...info(row), key };
}

export async function listApiKeys(db: Db, gateway: string): Promise<ApiKeyInfo[]> {
  const rows = await db.selectFrom('gateway_api_keys').selectAll().where('gateway', '=', gateway).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(info);
}

/** Revokes the gateway's key `id`; false when the gateway has no such key. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, gateway: string, id: string, now: Date): Promise<ApiKeyInfo | undefined> {
  await db.updateTable('gateway_api_keys').set({ revoked_at: now }).where('id', '=', id).where('gateway', '=', gateway).where('revoked_at', 'is', null).execute();
  const row = await db.selectFrom('gateway_api_keys').selectAll().where('id', '=', id).where('gateway', '=', gateway).executeTakeFirst();
  return row ? info(row) : undefined;
}

export type { ApiKeyOwner };

/** The gateway a presented key acts for, or undefined when it is malformed, unknown or revoked. */
export async function ownerOfApiKey(db: Db, presented: string): Promise<ApiKeyOwner | undefined> {
  const m = KEY.exec(presented);
  if (!m?.[1]) return undefined;
  const row = await db.selectFrom('gateway_api_keys').select(['gateway', 'key_hash', 'revoked_at', 'created_by']).where('id', '=', m[1]).executeTakeFirst();
  if (!row || row.revoked_at !== null) return undefined;
  const ok = timingSafeEqual(Buffer.from(row.key_hash, 'hex'), digest(presented));
  return ok ? { id: m[1], gateway: row.gateway, createdBy: row.created_by } : undefined;
}
