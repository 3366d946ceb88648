/**
 * Due work derived from the chain's own accounts, not the policies read model: every
 * served gateway's PaymentPolicy accounts (one getProgramAccounts per gateway, filtered
 * by the account's discriminator and its gateway field). For each Active policy whose
 * next scheduled payment the gateway's signer may make (release.ts) and that falls due
 * within `horizonS`, an intent (due date, payment count), first tried at the due date; and
 * the policy's parked intents (paused) are due again. So a new policy's first scheduled
 * payment, and a resumed one's owed period, come on time however far the indexer and the
 * projectors are behind. The read model still brings what falls due between sweeps.
 *
 * Its cost is one scan of the gateway's policies on the RPC node per sweep; the scheduler
 * runs it every SWEEP_EVERY_TICKS rounds (scheduler.ts).
 */
import bs58 from 'bs58';
import type { Db } from '../../infra/postgres/database.js';
import { decodeAccount, type EventData } from '../../src/kernel/events/codec.js';
import { idlAccounts } from '../../src/kernel/idl/index.js';
import { pgText, text } from '../../src/kernel/domain/event-data.js';
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

interface RawAccount { pubkey: string; account: { data: [string, string] } }

export interface SweepResult { policies: number; due: number; unparked: number }

/** Active policies of the gateway on the chain, decoded; accounts that do not decode are skipped. */
async function policiesOf(io: ChainIo, gateway: string): Promise<{ address: string; data: EventData }[]> {
  const raw = await io.rpc.call<RawAccount[]>('getProgramAccounts', [io.programId, {
    encoding: 'base64', commitment: io.commitment,
    filters: [{ memcmp: { offset: 0, bytes: DISCRIMINATOR } }, { memcmp: { offset: GATEWAY_OFFSET, bytes: gateway } }],
  }]);
  const out: { address: string; data: EventData }[] = [];
  for (const r of raw) {
    try {
      out.push({ address: r.pubkey, data: decodeAccount('PaymentPolicy', Buffer.from(r.account.data[0], 'base64')) });
    } catch {
      // not a PaymentPolicy of this layout: nothing the scheduler can pay
    }
  }
  return out;
}

export async function sweepChain(db: Db, io: ChainIo, gateways: readonly string[], nowS: number, horizonS: number): Promise<SweepResult> {
  const result: SweepResult = { policies: 0, due: 0, unparked: 0 };
  for (const gateway of gateways) {
    const active = (await policiesOf(io, gateway)).filter((p) => asStatus(p.data['status']) === 'Active');
    result.policies += active.length;
    for (const p of active) {
      const type = asPolicyType(p.data['policy_type']);
      if (!SCHEDULED.has(type.kind) || !gatewayMayRelease(type)) continue;
      const due = nextPaymentDue(type, 'Active');
      if (due === null || Number(due) > nowS + horizonS) continue;
      const trackingId = pgText(memoToTrackingId(Buffer.from(text(p.data, 'memo_hex'), 'hex')));
      await ensureIntent(db, { policy: p.address, gateway, variant: type.kind, tracking_id: trackingId }, Number(due), Number(due) * 1000, Number(p.data['payment_count']));
      result.due += 1;
    }
    const parked = await db.selectFrom('execution_intents').select('policy').distinct().where('status', '=', 'paused').where('gateway', '=', gateway).execute();
    const activeSet = new Set(active.map((p) => p.address));
    result.unparked += await unpark(db, parked.map((r) => r.policy).filter((a) => activeSet.has(a)));
  }
  return result;
}
