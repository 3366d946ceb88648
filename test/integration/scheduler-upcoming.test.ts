/**
 * payment.upcoming: every policy of a served gateway falling due within the lead time
 * (SCHEDULER_UPCOMING_LEAD_SECONDS) is announced once per (policy, due time), to the
 * gateway's webhooks and the trackingId's room, in batches: hundreds of policies in one
 * round, none twice across rounds and schedulers, a new due time announced anew, and
 * nothing beyond the lead time or for a paused policy.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { expect } from 'chai';
import { policyDoc } from '../../projections/policies/doc.js';
import { createWebhook } from '../../commands/webhooks/service.js';
import { webhookDeps } from '../../commands/webhooks/routes.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const LEAD = 3600;

describe('scheduler: payment.upcoming announced once per due time, in batches', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  let hook: number;
  const rooms: { trackingId: string; body: any }[] = [];

  before(async () => {
    s = await startSchedulerHarness('sched-upcoming', { SCHEDULER_UPCOMING_LEAD_SECONDS: String(LEAD) });
    const created = await createWebhook(webhookDeps(s.h.api.node), { kind: 'admin' }, { gateway_pubkey: s.authority, endpoint_url: 'https://receiver.example/hook', active: true });
    hook = Number((created as { id: number | string }).id);
  });
  after(async () => { await s?.close(); });

  /** policies of the served gateway in the read model, as the projector holds them */
  const seed = async (dues: { inSeconds: number; status?: string }[]) => {
    const now = Math.floor(Date.now() / 1000);
    const rows = dues.map((d, i) => {
      const address = bs58.encode(randomBytes(32));
      const due = String(now + d.inSeconds);
      const policyType = { kind: 'Subscription', amount: '1000', auto_renew: true, max_renewals: null, payment_frequency: 'Monthly', next_payment_due: due };
      const row = {
        address, policy_id: 1, user_payment: bs58.encode(randomBytes(32)), owner: bs58.encode(randomBytes(32)), token_mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        gateway: s.gateway, recipient: s.authority, variant: 'Subscription', policy_type: JSON.stringify(policyType), memo: Buffer.alloc(64),
        tracking_id: `order-${i}`, status: d.status ?? 'Active', total_paid: '0', total_output: null, extra: null, payment_count: 1,
        last_payment_at: null, last_payment_signature: null, next_payment_due: due, created_at: now, updated_at: now, created_slot: 1,
        created_signature: 'x', deleted: false, deleted_at: null,
      };
      return { ...row, doc: policyDoc('payment', { ...row, policy_id: '1', created_at: String(now), created_slot: '1', updated_at: String(now), policy_type: policyType }) };
    });
    await s.h.env.db.insertInto('payment_policies').values(rows).execute();
    return rows.map((r) => ({ address: r.address, due: Number(r.next_payment_due) }));
  };
  const announced = () => s.h.env.db.selectFrom('service_events').select(['policy', 'event_key', 'payload']).where('name', '=', 'payment.upcoming').execute();
  const deliveries = () => s.h.env.db.selectFrom('webhook_deliveries').select(['event_id', 'payload']).where('webhook_id', '=', hook).where('event_name', '=', 'payment.upcoming').execute();

  it('announces hundreds of due dates within the lead time in one round, each once, to the webhook and the room', async () => {
    const within = await seed(Array.from({ length: 300 }, (_, i) => ({ inSeconds: 60 + i * 10 })));
    const beyond = await seed([{ inSeconds: LEAD + 600 }, { inSeconds: LEAD * 3 }]);
    const paused = await seed([{ inSeconds: 120, status: 'Paused' }]);
    const a = s.scheduler({ autoStart: false, rooms: { emit: (trackingId, _e, body) => void rooms.push({ trackingId, body }) } });
    await a.tick();
    const events = await announced();
    expect(events.map((e) => e.policy).sort()).to.deep.equal(within.map((p) => p.address).sort());
    for (const p of within) expect(events.some((e) => e.event_key === `payment.upcoming:${p.address}:${p.due}`)).to.equal(true);
    expect(events.some((e) => [...beyond, ...paused].some((p) => p.address === e.policy))).to.equal(false);
    const sent = await deliveries();
    expect(sent).to.have.length(300);
    const body = sent.map((d) => d.payload as any).find((b) => b.policy === within[0]!.address);
    expect(body).to.include({ event: 'payment.upcoming', gateway: s.gateway, dueAt: within[0]!.due, variant: 'Subscription' });
    expect(body.dueDate).to.equal(new Date(within[0]!.due * 1000).toISOString());
    expect(rooms).to.have.length(300);

    // another round, another scheduler: nothing twice
    const b = s.scheduler({ autoStart: false });
    await b.tick();
    expect(await announced()).to.have.length(300);
    expect(await deliveries()).to.have.length(300);
  });

  it('a new due time of the same policy is announced anew', async () => {
    const [p] = await seed([{ inSeconds: 200 }]);
    const a = s.scheduler({ autoStart: false });
    await a.tick();
    const moved = String(p!.due + 600);
    await s.h.env.db.updateTable('payment_policies').set({ next_payment_due: moved }).where('address', '=', p!.address).execute();
    const b = s.scheduler({ autoStart: false });
    await b.tick();
    const keys = (await announced()).filter((e) => e.policy === p!.address).map((e) => e.event_key).sort();
    expect(keys).to.deep.equal([`payment.upcoming:${p!.address}:${p!.due}`, `payment.upcoming:${p!.address}:${moved}`].sort());
  });
});
