/**
 * The signing_keys table. Creation and rotation hold a transaction-scoped advisory lock,
 * so nodes that start or rotate at the same moment serialize (and the partial unique
 * index keeps one active key even if the lock were bypassed). Times come from the
 * injected clock, never from the database's now(), so tests can move time.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../postgres/database.js';
import type { Database } from '../postgres/schema.js';
import { generateSigningKey, newKid, sealPrivateJwk, SIGNING_ALG, type PublicJwk } from './crypto.js';
import type { SecretColumn } from '../secrets/columns.js';

type Executor = Transaction<Database>;

export interface StoredKey {
  kid: string;
  publicJwk: PublicJwk;
  /** sealed private JWK; present only on the active key */
  sealedPrivate: string | null;
  createdAt: Date;
  /** null while active */
  retiresAt: Date | null;
}

export interface KeyWriteOptions { nowMs: number; encryptionKey: Buffer | undefined }

const LOCK = sql`SELECT pg_advisory_xact_lock(hashtext('tributary:signing_keys'))`;

/** The sealed private halves: only the active key keeps one (rotation erases the old key's). */
export const SIGNING_KEY_SECRETS: SecretColumn = {
  kind: 'signing key', table: 'signing_keys', id: 'kid', column: 'private_jwk',
  aad: (kid) => kid,
  inUse: () => sql`retires_at IS NULL`,
};

function toStored(r: { kid: string; public_jwk: Record<string, unknown>; private_jwk: string | null; created_at: Date; retires_at: Date | null }): StoredKey {
  return { kid: r.kid, publicJwk: r.public_jwk as unknown as PublicJwk, sealedPrivate: r.private_jwk, createdAt: r.created_at, retiresAt: r.retires_at };
}

/** The active key and every key still in its grace period at `nowMs`, active first. */
export async function loadPublishedKeys(db: Db, nowMs: number): Promise<StoredKey[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .select(['kid', 'public_jwk', 'private_jwk', 'created_at', 'retires_at'])
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', new Date(nowMs))]))
    // the active key first, then the most recently retired (times can tie under a test clock)
    .orderBy(sql`retires_at IS NULL`, 'desc')
    .orderBy('retires_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toStored);
}

async function insertKey(trx: Executor, opts: KeyWriteOptions): Promise<string> {
  let kid = newKid(opts.nowMs);
  // 65,536 kids a day: a clash is rare, but a second rotation the same day must not fail on it.
  while (await trx.selectFrom('signing_keys').select('kid').where('kid', '=', kid).executeTakeFirst()) kid = newKid(opts.nowMs);
  const { publicJwk, privateJwk } = await generateSigningKey(kid);
  await trx.insertInto('signing_keys').values({
    kid,
    alg: SIGNING_ALG,
    public_jwk: JSON.stringify(publicJwk),
    private_jwk: sealPrivateJwk(privateJwk, kid, opts.encryptionKey),
    created_at: new Date(opts.nowMs),
    retires_at: null,
  }).execute();
  return kid;
}

async function activeKid(trx: Executor): Promise<string | undefined> {
  const row = await trx.selectFrom('signing_keys').select('kid').where('retires_at', 'is', null).executeTakeFirst();
  return row?.kid;
}

/** Makes the first key when there is none (first start); returns the active kid. */
export async function ensureActiveKey(db: Db, opts: KeyWriteOptions): Promise<{ kid: string; created: boolean }> {
  return db.transaction().execute(async (trx) => {
    await LOCK.execute(trx);
    const kid = await activeKid(trx);
    if (kid !== undefined) return { kid, created: false };
    return { kid: await insertKey(trx, opts), created: true };
  });
}

export interface RotationResult { newKid: string; oldKid: string; gracePeriodEndsAt: Date }

/**
 * Retires the active key at the end of the grace period and makes a new active key.
 * The old key's private half is erased now: only the active key ever signs, and the
 * published public half is all that verification needs during the grace period.
 */
export async function rotateSigningKey(db: Db, opts: KeyWriteOptions & { graceSeconds: number }): Promise<RotationResult> {
  return db.transaction().execute(async (trx) => {
    await LOCK.execute(trx);
    const oldKid = (await activeKid(trx)) ?? (await insertKey(trx, opts));
    const gracePeriodEndsAt = new Date(opts.nowMs + opts.graceSeconds * 1000);
    await trx.updateTable('signing_keys')
      .set({ retires_at: gracePeriodEndsAt, private_jwk: null })
      .where('kid', '=', oldKid)
      .execute();
    const newKid = await insertKey(trx, opts);
    return { newKid, oldKid, gracePeriodEndsAt };
  });
}
