/**
 * Due work derived from the chain's own accounts, not the policies read model, so a new
 * policy's first scheduled payment and a resumed policy's owed period come on time
 * however far the indexer and the projectors are behind:
 *
 *   - the served gateway's PaymentPolicy addresses (getProgramAccounts filtered by the
 *     account's discriminator and its gateway field, no data: addresses only); each
 *     address this process has not seen is read once (getMultipleAccounts) and its next
 *     scheduled payment noted; once that falls due within `horizonS` it becomes an intent
 *     (due date, payment count), first tried at the due date. After that payment the
 *     executor queues the next from the chain (outcomes.ts, enqueueNext) and the read
 *     model brings the rest. An address gone from the list is forgotten (a policy the
 *     program recreates there is a new one);
 *   - the parked intents (paused) of the gateway: their policies are read, and those
 *     Active again are due again (intents.ts, unpark).
 *
 * A milestone the gateway's signer may not release (release.ts) is never noted.
 */
import bs58 from 'bs58';
import type { Db } from '../../infra/postgres/database.js';
import { readProgramAccounts } from '../../infra/solana/accounts.js';
import { idlAccounts } from '../../src/kernel/idl/index.js';
import { pgText, text } from '../../src/kernel/domain/event-data.js';
import type { EventData } from '../../src/kernel/events/codec.js';
import { memoToTrackingId } from '../../src/kernel/domain/memo.js';
import { asPolicyType, asStatus } from '../../src/kernel/domain/policy-type.js';
import { nextPaymentDue } from '../../src/kernel/domain/schedule.js';
import type { ChainIo } from './chain.js';
import { ensureIntent, unpark } from './intents.js';
import { gatewayMayRelease } from './release.js';

const DISCRIMINATOR = bs58.encode(Buffer.from(idlAccounts.find((a) => a.name === 'PaymentPolicy')?.discriminator ?? []));
/** PaymentPolicy: discriminator (8), user_payment (32), recipient (32), then gateway */
const GATEWAY_OFFSET = 72;
const SCHEDULED = new Set(['Subscription', 'Milestone', 'OneTime']);
const PER_READ = 100;

/** A policy's next scheduled payment as first read, until it is queued; null: nothing for the scheduler. */
interface Noted { due: number; index: number; variant: string; trackingId: string }

export interface SweepResult { policies: number; read: number; queued: number; unparked: number }

export interface Sweeper { run(gateways: readonly string[], nowS: number, horizonS: number): Promise<SweepResult> }

export function createSweeper(db: Db, io: ChainIo): Sweeper {
  const seen = new Map<string, Map<string, Noted | null>>();

  async function addresses(gateway: string): Promise<string[]> {
    const raw = await io.rpc.call<{ pubkey: string }[]>('getProgramAccounts', [io.programId, {
      encoding: 'base64', commitment: io.commitment, dataSlice: { offset: 0, length: 0 },
      filters: [{ memcmp: { offset: 0, bytes: DISCRIMINATOR } }, { memcmp: { offset: GATEWAY_OFFSET, bytes: gateway } }],
    }]);
    return raw.map((r) => r.pubkey);
  }

  async function read(policies: readonly string[]): Promise<Map<string, EventData>> {
    const out = new Map<string, EventData>();
    for (let k = 0; k < policies.length; k += PER_READ) {
      const slice = policies.slice(k, k + PER_READ);
      const reads = await readProgramAccounts(io.rpc, slice, 'PaymentPolicy', { programId: io.programId, commitment: io.commitment });
      for (const r of reads) if (r.kind === 'found') out.set(r.address, r.data);
    }
    return out;
  }

  async function sweepGateway(gateway: string, nowS: number, horizonS: number, result: SweepResult): Promise<void> {
    const known = seen.get(gateway) ?? new Map<string, Noted | null>();
    seen.set(gateway, known);
    const listed = await addresses(gateway);
    result.policies += listed.length;
    const present = new Set(listed);
    for (const a of known.keys()) if (!present.has(a)) known.delete(a);
    const fresh = listed.filter((a) => !known.has(a));
    const accounts = await read(fresh);
    result.read += accounts.size;
    for (const a of fresh) known.set(a, noted(accounts.get(a)));
    for (const [policy, n] of known) {
      if (n === null || n.due > nowS + horizonS) continue;
      await ensureIntent(db, { policy, gateway, variant: n.variant, tracking_id: n.trackingId }, n.due, n.due * 1000, n.index);
      known.set(policy, null);
      result.queued += 1;
    }
    const parked = await db.selectFrom('execution_intents').select('policy').distinct().where('status', '=', 'paused').where('gateway', '=', gateway).execute();
    const now = await read(parked.map((r) => r.policy));
    result.unparked += await unpark(db, [...now].filter(([, d]) => asStatus(d['status']) === 'Active').map(([a]) => a));
  }

  return {
    async run(gateways, nowS, horizonS) {
      const result: SweepResult = { policies: 0, read: 0, queued: 0, unparked: 0 };
      for (const g of gateways) await sweepGateway(g, nowS, horizonS, result);
      for (const g of seen.keys()) if (!gateways.includes(g)) seen.delete(g);
      return result;
    },
  };
}

/** The next payment the gateway's signer makes for an Active policy, or null. */
function noted(d: EventData | undefined): Noted | null {
  if (!d || asStatus(d['status']) !== 'Active') return null;
  const type = asPolicyType(d['policy_type']);
  if (!SCHEDULED.has(type.kind) || !gatewayMayRelease(type)) return null;
  const due = nextPaymentDue(type, 'Active');
  if (due === null) return null;
  const trackingId = pgText(memoToTrackingId(Buffer.from(text(d, 'memo_hex'), 'hex')));
  return { due: Number(due), index: Number(d['payment_count']), variant: type.kind, trackingId };
}
