/**
 * Checkout sessions expire: past its expiry a session reads expired at once (before any
 * sweep), refuses its transaction and its pay with 410 session_expired, and two sweeps
 * racing (two scheduler processes) mark it expired and announce checkout.session.expired
 * exactly once, to the webhook and to the trackingId's room.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { createLogger } from '../../infra/log/logger.js';
import type { WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { expireDue } from '../../commands/checkout/events.js';
import { startCheckoutExpiry } from '../../commands/checkout/expiry.js';
import { nodeRooms } from '../../src/app/x402-exact.js';
import type { Receiver } from '../support/receiver.js';
import type { TestClient } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { startListenedCheckout, payAsWallet, signAsWallet, type CheckoutHarness } from './checkout-support.js';

describe('checkout sessions expire: 410 after their time, announced once whoever sweeps', function () {
  this.timeout(120_000);
  let c: CheckoutHarness;
  let receiver: Receiver;
  let worker: WebhookWorker;
  let client: TestClient;
  let lifecycle: any[] = [];
  const expiredHooks = (id: string) => receiver.requests.map((q) => JSON.parse(q.body)).filter((b: any) => b.type === 'checkout.session.expired' && b.data.sessionId === id);

  before(async () => {
    ({ c, receiver, worker, client, lifecycle } = await startListenedCheckout('checkout-expiry'));
  });
  after(async () => { client?.close(); await worker?.stop(); await receiver?.close(); await c?.close(); });

  it('past its expiry: reads expired, 410 on transaction and pay; two racing sweeps announce it once', async () => {
    const trackingId = 'order-late-1';
    expect((await client.subscribe(trackingId)).ok).to.equal(true);
    const created = await c.create({ trackingId, expiresInSeconds: 60 });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const { id } = created.body;
    const payer = c.h.payer();
    // signed while open, sent too late
    const t = await c.anyone('POST', `/v1/checkout/sessions/${id}/transaction`, { payer: payer.publicKey.toBase58() });
    expect(t.status).to.equal(200);
    const signed = signAsWallet(t.body, payer);

    c.shift(61_000);
    expect((await c.merchant('GET', `/v1/checkout/sessions/${id}`)).body.status, 'lazily, before any sweep').to.equal('expired');
    expect((await c.anyone('GET', `/v1/checkout/sessions/${id}/public`)).body.status).to.equal('expired');
    const late = await c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: signed.transaction, proof: signed.proof });
    expect(late.status).to.equal(410);
    expect(late.body).to.include({ code: 'session_expired', success: false });
    const landed = c.h.txCount();
    expect((await payAsWallet(c, id, payer)).answer.status).to.equal(410);
    expect(c.h.txCount(), 'nothing sent').to.equal(landed);

    // two scheduler processes sweeping at the same moment
    const deps = { db: c.h.env.db, rooms: nodeRooms(c.api.node) };
    const now = new Date(c.nowMs());
    const [a, b] = await Promise.all([expireDue(deps, now), expireDue(deps, now)]);
    expect(a + b, 'announced once in all').to.equal(1);
    expect(await expireDue(deps, now), 'nothing left').to.equal(0);
    const row = await c.h.env.db.selectFrom('checkout_sessions').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.status).to.equal('expired');
    const events = await c.h.env.db.selectFrom('service_events').select('payload').where('event_key', '=', `checkout.session.expired:${id}`).execute();
    expect(events).to.have.length(1);

    await waitFor(async () => expiredHooks(id).length > 0 && lifecycle.some((m) => m.type === 'checkout.session.expired'), 30_000, 'the webhook and the room message');
    const body = expiredHooks(id)[0];
    expect(body.data).to.deep.include({ event: 'checkout.session.expired', sessionId: id, trackingId, gateway: c.gw.address, expiresAt: created.body.expiresAt });
    expect(lifecycle.filter((m) => m.type === 'checkout.session.expired')).to.have.length(1);
    expect(new Set(expiredHooks(id).map((h: any) => h.id)).size, 'one event (delivery may repeat it)').to.equal(1);
  });

  it('the scheduler\'s sweep expires sessions on its own, and never a complete one', async () => {
    const open = (await c.create({ expiresInSeconds: 60 })).body.id as string;
    const paid = (await c.create({ expiresInSeconds: 60 })).body.id as string;
    expect((await payAsWallet(c, paid, c.h.payer())).answer.status).to.equal(200);
    c.shift(61_000);
    const sweeps = [0, 1].map(() => startCheckoutExpiry({ db: c.h.env.db, logger: createLogger('silent', 'sweep'), nowMs: () => c.nowMs(), periodMs: 50 }));
    try {
      await waitFor(async () => expiredHooks(open).length > 0, 30_000, 'the expired webhook');
    } finally {
      await Promise.all(sweeps.map((s) => s.stop()));
    }
    const statuses = await c.h.env.db.selectFrom('checkout_sessions').select(['id', 'status']).where('id', 'in', [open, paid]).execute();
    expect(Object.fromEntries(statuses.map((s) => [s.id, s.status]))).to.deep.equal({ [open]: 'expired', [paid]: 'complete' });
    expect(await c.h.env.db.selectFrom('service_events').select('id').where('event_key', '=', `checkout.session.expired:${open}`).execute()).to.have.length(1);
    expect(expiredHooks(paid)).to.have.length(0);
  });
});
