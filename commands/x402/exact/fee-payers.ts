/**
 * The fee payer keys of the `exact` facilitator, one active per network. A key's 64-byte
 * secret is sealed like the JWT signing keys (AES-256-GCM under SIGNING_KEY_ENCRYPTION_KEY,
 * infra/crypto/secret-box) with its address as associated data, so a row copied onto
 * another does not open. Creation and rotation hold an advisory lock (nodes starting or
 * rotating at once serialize; the partial unique index keeps one active key regardless).
 * A rotated-out key still co-signs for its grace period: a 402 answered a moment before
 * the rotation names it, and the client's transaction is built around it.
 */
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { openSecret, sealSecret, SecretBoxError } from '../../../infra/crypto/secret-box.js';
import type { SecretColumn } from '../../../infra/secrets/columns.js';

const aad = (address: string): string => `x402-fee-payer:${address}`;
const LOCK = sql`SELECT pg_advisory_xact_lock(hashtext('tributary:x402_fee_payers'))`;

/** The sealed fee payer keys: the active one and those in their grace period co-sign. */
export const FEE_PAYER_SECRETS: SecretColumn = {
  kind: 'fee payer key', table: 'x402_fee_payers', id: 'address', column: 'secret',
  aad,
  inUse: (nowMs) => sql`retires_at IS NULL OR retires_at > ${new Date(nowMs)}`,
};

export class FeePayerKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeePayerKeyError';
  }
}

export interface FeePayerKey {
  address: string;
  /** the 64-byte secret key (seed and public key), as @solana/kit's createKeyPairSignerFromBytes takes it */
  secretKey: Uint8Array;
  active: boolean;
}

export interface FeePayerWrite { network: string; nowMs: number; encryptionKey: Buffer | undefined }

export interface FeePayerRotation { network: string; newFeePayer: string; oldFeePayer: string; gracePeriodEndsAt: Date }

async function insertKey(trx: Db, w: FeePayerWrite): Promise<string> {
  const kp = Keypair.generate();
  const address = kp.publicKey.toBase58();
  await trx.insertInto('x402_fee_payers').values({
    address, network: w.network, secret: sealSecret(bs58.encode(kp.secretKey), aad(address), w.encryptionKey),
    created_at: new Date(w.nowMs), retires_at: null,
  }).execute();
  return address;
}

async function activeAddress(trx: Db, network: string): Promise<string | undefined> {
  const row = await trx.selectFrom('x402_fee_payers').select('address').where('network', '=', network).where('retires_at', 'is', null).executeTakeFirst();
  return row?.address;
}

/** The network's active fee payer, made on first use. */
export async function ensureFeePayer(db: Db, w: FeePayerWrite): Promise<{ address: string; created: boolean }> {
  return db.transaction().execute(async (trx) => {
    await LOCK.execute(trx);
    const address = await activeAddress(trx, w.network);
    if (address !== undefined) return { address, created: false };
    return { address: await insertKey(trx, w), created: true };
  });
}

/**
 * A new active fee payer; the old one co-signs until the grace period ends and never
 * after. Its sealed key is kept (it may still hold SOL).
 */
export async function rotateFeePayer(db: Db, w: FeePayerWrite & { graceSeconds: number }): Promise<FeePayerRotation> {
  return db.transaction().execute(async (trx) => {
    await LOCK.execute(trx);
    const oldFeePayer = (await activeAddress(trx, w.network)) ?? (await insertKey(trx, w));
    const gracePeriodEndsAt = new Date(w.nowMs + w.graceSeconds * 1000);
    await trx.updateTable('x402_fee_payers').set({ retires_at: gracePeriodEndsAt }).where('address', '=', oldFeePayer).execute();
    const newFeePayer = await insertKey(trx, w);
    return { network: w.network, newFeePayer, oldFeePayer, gracePeriodEndsAt };
  });
}

/** The keys that sign now for `network`: the active one first, then those in their grace period. */
export async function loadFeePayers(db: Db, network: string, nowMs: number, encryptionKey: Buffer | undefined): Promise<FeePayerKey[]> {
  const rows = await db.selectFrom('x402_fee_payers').select(['address', 'secret', 'retires_at'])
    .where('network', '=', network).where('secret', 'is not', null)
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', new Date(nowMs))]))
    .orderBy(sql`retires_at IS NULL`, 'desc').orderBy('retires_at', 'desc')
    .execute();
  return rows.map((r) => {
    try {
      const secretKey = bs58.decode(openSecret(r.secret ?? '', aad(r.address), encryptionKey));
      if (secretKey.length !== 64) throw new FeePayerKeyError(`fee payer ${r.address}: the stored secret is not a 64-byte key`);
      return { address: r.address, secretKey, active: r.retires_at === null };
    } catch (err) {
      if (err instanceof SecretBoxError) throw new FeePayerKeyError(`fee payer ${r.address}: ${err.message}`);
      throw err;
    }
  });
}

/** Every fee payer address of `network` that may still hold SOL, active first (balances, status). */
export async function listFeePayers(db: Db, network?: string): Promise<{ address: string; network: string; active: boolean; retiresAt: Date | null }[]> {
  let q = db.selectFrom('x402_fee_payers').select(['address', 'network', 'retires_at']);
  if (network !== undefined) q = q.where('network', '=', network);
  const rows = await q.orderBy('network').orderBy(sql`retires_at IS NULL`, 'desc').orderBy('created_at', 'desc').execute();
  return rows.map((r) => ({ address: r.address, network: r.network, active: r.retires_at === null, retiresAt: r.retires_at }));
}
