/**
 * The gateways the service executes for, and their delegated signers. A signer's secret
 * key is sealed like the JWT signing keys (AES-256-GCM under SIGNING_KEY_ENCRYPTION_KEY),
 * with the gateway account as associated data, so a row copied onto another gateway does
 * not open. The authority key of a gateway is never held: the merchant signs
 * change_gateway_signer itself.
 */
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { openSecret, sealSecret, SecretBoxError } from '../../infra/crypto/secret-box.js';
import type { Logger } from '../../infra/log/logger.js';
import type { SecretColumn } from '../../infra/secrets/columns.js';
import type { SchedulerState } from './tables.js';

const aad = (gateway: string): string => `scheduler-signer:${gateway}`;

/** The sealed signer secrets: those of gateways not stopped are opened by the scheduler and the settler. */
export const SCHEDULER_SIGNER_SECRETS: SecretColumn = {
  kind: 'scheduler signer secret', table: 'scheduler_gateways', id: 'gateway', column: 'secret',
  aad,
  inUse: () => sql`state <> 'stopped'`,
};

export interface ServedGateway {
  gateway: string;
  authority: string;
  signer: string;
  state: SchedulerState;
  source: 'api' | 'fixtures';
  /** why the signer row does not open; null when it does */
  signer_error?: string | null;
}

export async function findServedGateway(db: Db, gateway: string): Promise<(ServedGateway & { secret: string }) | undefined> {
  return db.selectFrom('scheduler_gateways').select(['gateway', 'authority', 'signer', 'state', 'source', 'secret', 'signer_error'])
    .where('gateway', '=', gateway).executeTakeFirst();
}

/** A new signer for the gateway, or the one it has unless stopped (a repeated POST answers the same signer). */
export async function delegateGateway(
  db: Db, input: { gateway: string; authority: string; encryptionKey: Buffer | undefined; source?: 'api' | 'fixtures'; keypair?: Keypair },
): Promise<ServedGateway> {
  const existing = await findServedGateway(db, input.gateway);
  if (existing && existing.state !== 'stopped' && !input.keypair) return existing;
  const kp = input.keypair ?? Keypair.generate();
  const row = {
    gateway: input.gateway, authority: input.authority, signer: kp.publicKey.toBase58(),
    secret: sealSecret(bs58.encode(kp.secretKey), aad(input.gateway), input.encryptionKey),
    state: 'pending' as const, source: input.source ?? 'api',
  };
  await db.insertInto('scheduler_gateways').values(row)
    .onConflict((oc) => oc.column('gateway').doUpdateSet({
      authority: row.authority, signer: row.signer, secret: row.secret, state: 'pending', source: row.source,
      created_at: sql<Date>`now()`, activated_at: null, stopped_at: null, signer_error: null,
    }))
    .execute();
  return { gateway: row.gateway, authority: row.authority, signer: row.signer, state: row.state, source: row.source };
}

export async function stopGateway(db: Db, gateway: string): Promise<boolean> {
  const r = await db.updateTable('scheduler_gateways').set({ state: 'stopped', stopped_at: sql<Date>`now()` })
    .where('gateway', '=', gateway).where('state', '!=', 'stopped').executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** pending ↔ active as the chain's gateway signer says; a stopped gateway stays stopped. */
export async function setGatewayState(db: Db, gateway: string, state: 'pending' | 'active'): Promise<void> {
  await db.updateTable('scheduler_gateways')
    .set({ state, activated_at: state === 'active' ? sql<Date>`coalesce(activated_at, now())` : null })
    .where('gateway', '=', gateway).where('state', '!=', 'stopped').where('state', '!=', state).execute();
}

export async function listServedGateways(db: Db): Promise<ServedGateway[]> {
  return db.selectFrom('scheduler_gateways').select(['gateway', 'authority', 'signer', 'state', 'source'])
    .where('state', '!=', 'stopped').orderBy('gateway').execute();
}

/** The row's signer keypair, or why it does not open (never the secret itself). */
function openSigner(r: { gateway: string; signer: string; secret: string }, encryptionKey: Buffer | undefined): Keypair | string {
  let kp: Keypair;
  try {
    kp = Keypair.fromSecretKey(bs58.decode(openSecret(r.secret, aad(r.gateway), encryptionKey)));
  } catch (err) {
    return err instanceof SecretBoxError ? err.message : `${aad(r.gateway)}: the opened secret is not a keypair`;
  }
  if (kp.publicKey.toBase58() !== r.signer) return `${aad(r.gateway)}: the sealed key is not the delegated signer ${r.signer}`;
  return kp;
}

/**
 * The signer keypairs of the active gateways, opened one row at a time: a row that does
 * not open (tampered, sealed under another SIGNING_KEY_ENCRYPTION_KEY, not the delegated
 * signer) stops that gateway only. Its reason is kept in signer_error (the gateway's
 * scheduler status, `tributary status` and /metrics show it) and logged as an error by
 * the process that saw it first; it is cleared once the row opens again.
 */
export async function activeSigners(db: Db, encryptionKey: Buffer | undefined, log?: Logger): Promise<Map<string, Keypair>> {
  const rows = await db.selectFrom('scheduler_gateways').select(['gateway', 'signer', 'secret', 'signer_error']).where('state', '=', 'active').execute();
  const out = new Map<string, Keypair>();
  for (const r of rows) {
    const opened = openSigner(r, encryptionKey);
    const error = typeof opened === 'string' ? opened : null;
    if (error !== r.signer_error && (await markSignerError(db, r.gateway, r.signer_error, error))) {
      if (error) log?.error({ gateway: r.gateway, err: error }, 'the gateway\'s signer does not open: its payments and settlement wait; the other gateways go on');
      else log?.info({ gateway: r.gateway }, 'the gateway\'s signer opens again');
    }
    if (typeof opened !== 'string') out.set(r.gateway, opened);
  }
  return out;
}

/** Sets signer_error if it still is `was`; true when this call changed it. */
async function markSignerError(db: Db, gateway: string, was: string | null, error: string | null): Promise<boolean> {
  const r = await db.updateTable('scheduler_gateways').set({ signer_error: error })
    .where('gateway', '=', gateway)
    .where((eb) => (was === null ? eb('signer_error', 'is', null) : eb('signer_error', '=', was)))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
