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
import { openSecret, sealSecret } from '../../infra/crypto/secret-box.js';
import type { SchedulerState } from './tables.js';

const aad = (gateway: string): string => `scheduler-signer:${gateway}`;

export interface ServedGateway {
  gateway: string;
  authority: string;
  signer: string;
  state: SchedulerState;
  source: 'api' | 'fixtures';
}

export async function findServedGateway(db: Db, gateway: string): Promise<(ServedGateway & { secret: string }) | undefined> {
  return db.selectFrom('scheduler_gateways').select(['gateway', 'authority', 'signer', 'state', 'source', 'secret'])
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
      created_at: sql<Date>`now()`, activated_at: null, stopped_at: null,
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

/** The signer keypairs of the active gateways, opened. */
export async function activeSigners(db: Db, encryptionKey: Buffer | undefined): Promise<Map<string, Keypair>> {
  const rows = await db.selectFrom('scheduler_gateways').select(['gateway', 'secret']).where('state', '=', 'active').execute();
  return new Map(rows.map((r) => [r.gateway, Keypair.fromSecretKey(bs58.decode(openSecret(r.secret, aad(r.gateway), encryptionKey)))]));
}
