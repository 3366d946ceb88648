/**
 * A pay-as-you-go charge signed from a read of its policy older than a charge already recorded
 * for it is never opened (charges.ts, openCharge; migration 1017).
 *
 * Two scheduler processes settle with no leader. Settler A reads the policy (payment_count n)
 * while settler B's charge C0 is in flight; C0 lands and B records it executed (record n + 1);
 * A then opens C1 with payment_count_before n (nothing of the policy is in flight any more), and
 * C1 never lands (its send's answer lost). Once C1's blockhash expired and its status was gone,
 * its fate was read from the count: moved past n, so "landed". C1 was recorded executed, its
 * usage charged and never paid; and when C1's bytes were C0's (same amount, count and
 * blockhash), its send even answered "already processed". A node behind the one that confirmed
 * C0 gives the same old count to a single settler.
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { latestBlockhash, readExecutionContext, signExecution, type ExecutionContext } from '../../commands/scheduler/chain.js';
import { confirm, send } from '../../infra/solana/sender.js';
import { chargeBasis, chargeExecuted, openCharge } from '../../commands/settlement/charges.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { DEMO_PATH } from './x402-harness.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;

describe('pay-as-you-go: a charge signed from a read older than a charge recorded for its policy', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => { s = await startSchedulerHarness('payg-stale-read', { ...demoPaygEnv(PRICE, 500) }); });
  after(async () => { await s?.close(); });

  /** A payg policy with two metered requests, and settler B's charge of the first recorded executed after settler A read the policy. */
  async function chargedBehindARead() {
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    const { jwt, policy } = { jwt: paid.paid!.jwt, policy: paid.paid!.policy! };
    const again = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(again.status).to.equal(200);
    const db = s.h.env.db;
    const rows = await db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).orderBy('metered_at').orderBy('request_id').execute();
    expect(rows).to.have.length(2);
    // settler A's read: payment_count n
    const read = await readExecutionContext(s.io, policy);
    if ('class' in read) throw new Error(read.reason);
    // settler B charges the first row, and records it executed
    const s0 = signExecution(s.io, read, s.signer, await latestBlockhash(s.io), BigInt(rows[0]!.chunk));
    const c0 = await openCharge(db, { policy, gateway: s.gateway, amount: BigInt(rows[0]!.chunk), ...chargeBasis(read), ...s0 }, [rows[0]!.request_id]);
    if (typeof c0 === 'string') throw new Error(`settler B's charge not opened: ${c0}`);
    expect((await send(s.io, s0.wire)).kind).to.equal('sent');
    expect((await confirm(s.io, s0.signature, { timeoutMs: 10_000 })).kind).to.equal('landed');
    expect(await chargeExecuted(db, c0.id)).to.not.equal(undefined);
    return { policy, read, rows, s0 };
  }

  const openFrom = async (read: ExecutionContext, policy: string, row: { request_id: string; chunk: string }, basis = chargeBasis(read)) => {
    const signed = signExecution(s.io, read, s.signer, await latestBlockhash(s.io), BigInt(row.chunk));
    return { signed, charge: await openCharge(s.h.env.db, { policy, gateway: s.gateway, amount: BigInt(row.chunk), ...basis, ...signed }, [row.request_id]) };
  };

  it('is refused as stale, its usage left unsettled, and charged from a fresh read: one PaymentRecord per charge, none recorded twice', async () => {
    const { policy, read, rows, s0 } = await chargedBehindARead();
    const db = s.h.env.db;
    const stale = await openFrom(read, policy, rows[1]!);
    expect(stale.charge, 'a charge whose payment_count_before an executed charge of the policy has passed').to.equal('stale');
    const left = await db.selectFrom('payg_usage').select(['charge_id']).where('request_id', '=', rows[1]!.request_id).executeTakeFirstOrThrow();
    expect(left.charge_id, 'its usage still unsettled').to.equal(null);
    expect(await db.selectFrom('payg_charges').select('id').where('policy', '=', policy).execute(), 'no row of the refused charge').to.have.length(1);

    await new Promise((r) => setTimeout(r, 5500)); // the second row past its admission window
    const settler = startSettler({ db, io: s.io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() }, { autoStart: false });
    try { await settler.tick(); } finally { await settler.stop(); }
    const records = s.records(policy);
    expect(records.map((r) => r.amount), 'each row charged once, by its own transaction').to.deep.equal([PRICE, PRICE]);
    expect(records[0]!.signature).to.equal(s0.signature);
    const charges = await db.selectFrom('payg_charges').select(['signature', 'status', 'record_id']).where('policy', '=', policy).orderBy('id').execute();
    expect(charges).to.deep.equal([
      { signature: s0.signature, status: 'executed', record_id: 1 },
      { signature: records[1]!.signature, status: 'executed', record_id: 2 },
    ]);
  });

  it('a policy created anew at the same address (counting from zero again) is not held back by the old policy\'s charges', async () => {
    const { policy, read, rows } = await chargedBehindARead();
    expect(chargeBasis(read).policyCreatedAt, 'the policy\'s created_at, as the chain keeps it').to.match(/^[1-9][0-9]{9}$/);
    // the same count, but another policy's created_at: the executed charge numbered 1 belonged to the policy before
    const reused = await openFrom(read, policy, rows[1]!, { paymentCountBefore: 0, policyCreatedAt: `${chargeBasis(read).policyCreatedAt}1` });
    expect(reused.charge).to.have.property('status', 'sending');
  });
});
