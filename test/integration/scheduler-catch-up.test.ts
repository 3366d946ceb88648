/**
 * Due work comes from the chain's own accounts, not only from the policies read model:
 * with no indexer and no projector running (the read model empty, as far behind as it
 * can be), a new subscription's first scheduled payment is still made at its due date.
 * And a scheduler that was down catches up every period the program still lets it
 * collect (shared/schedule.rs): for a subscription one payment, after which the program
 * moves the due date past the missed periods; for a milestone policy every milestone
 * whose time has come, each once, in order. Nothing is paid before its due date. A
 * resume the read model never shows is found on the chain too: the owed period is paid.
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { approveIx, associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { dataOf } from '../support/anchor-events.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { accountOf, createMilestone, sendAs, setPolicyStatus } from './scheduler-chain.js';

const PERIOD = 3;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('scheduler: due work from the chain\'s accounts; a late scheduler catches up what the program lets it collect', function () {
  this.timeout(150_000);
  let s: SchedulerHarness;

  before(async () => { s = await startSchedulerHarness('sched-catch-up', { X402_DEMO_FREQUENCY: `Custom:${PERIOD}` }, { readModel: false }); });
  after(async () => { await s?.close(); });

  const intents = (policy: string) => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).orderBy('id').execute();
  /** the program's clock at each PaymentRecord of the policy */
  const paidAt = (policy: string) => s.h.ln.ledger()
    .filter((e) => e.name === 'PaymentRecord' && e.data['payment_policy'] === policy)
    .map((e) => ({ signature: e.signature, at: Number(dataOf(e)['timestamp']) }));
  const nextDue = async (policy: string) => Number(((await accountOf(s.h.rpc, policy))['policy_type'] as { next_payment_due: string }).next_payment_due);
  /** every executed intent paid at or after its due date, one PaymentRecord each */
  const noneEarlyNoneTwice = async (policy: string) => {
    const at = new Map(paidAt(policy).map((p) => [p.signature, p.at]));
    const done = (await intents(policy)).filter((i) => i.status === 'executed');
    expect(new Set(done.map((i) => `${i.due_at}:${i.payment_index}`)).size, 'each payment once').to.equal(done.length);
    for (const i of done) expect(at.get(i.signature ?? '') ?? 0, `paid at or after ${i.due_at}`).to.be.at.least(Number(i.due_at));
    return done;
  };

  it('a new subscription\'s first scheduled payment, with the policies read model empty', async () => {
    const scheduler = s.scheduler();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const policy = r.paid!.policy!;
    await waitFor(async () => s.records(policy).length >= 3, 30_000, 'two scheduled payments');
    await scheduler.stop();
    expect(await s.h.env.db.selectFrom('payment_policies').select('address').execute(), 'the read model never had it').to.have.length(0);
    expect(await noneEarlyNoneTwice(policy)).to.have.length(s.records(policy).length - 1);
  });

  it('down for several periods: one payment for the missed ones (the program skips the rest), then on time again', async () => {
    let scheduler = s.scheduler();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    const policy = r.paid!.policy!;
    await waitFor(async () => s.records(policy).length >= 2, 30_000, 'a scheduled payment');
    await scheduler.stop();
    const before = s.records(policy).length;
    const missedFrom = await nextDue(policy);
    await sleep((3 * PERIOD + 1) * 1000);
    expect(s.records(policy), 'nothing paid while down').to.have.length(before);

    const restartedAt = Math.floor(Date.now() / 1000);
    scheduler = s.scheduler();
    await waitFor(async () => s.records(policy).length >= before + 1, 10_000, 'the missed due date collected');
    const jumped = await nextDue(policy);
    expect(jumped, 'the program moved the due date past the missed periods').to.be.above(restartedAt - 1);
    expect((jumped - missedFrom) % PERIOD).to.equal(0);
    // the skipped periods are not collectable: nothing more until the new due date
    const skipped = s.records(policy).length;
    expect(skipped).to.equal(before + 1);
    await waitFor(async () => s.records(policy).length >= skipped + 1, 15_000, 'the next period, on time');
    await scheduler.stop();
    expect(paidAt(policy).at(-1)!.at).to.be.at.least(jumped);
    await noneEarlyNoneTwice(policy);
  });

  it('down past several milestone times: each milestone paid once, in order, none before its time', async () => {
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    const { tokenMint: mint, recipient } = r.paid!.requirement;
    const owner = payer.publicKey.toBase58();
    await sendAs(s.h.rpc, payer, approveIx(associatedTokenAddress(owner, mint), createPdaDeriver(s.config.solana.programId).userPayment(owner, mint), owner, 1_000_000_000_000n));
    const t = Math.floor(Date.now() / 1000) + 2;
    const stamps = [t, t + 2, t + 4, t + 30];
    const policy = await createMilestone(s.h.rpc, payer, { mint, gateway: s.gateway, recipient, amounts: [100n, 200n, 300n, 400n], timestamps: stamps, releaseCondition: 1 });
    await sleep((stamps[2]! + 1) * 1000 - Date.now());
    const scheduler = s.scheduler();
    await waitFor(async () => s.records(policy).length >= 3, 15_000, 'the three milestones whose time has come');
    await sleep(2000);
    await scheduler.stop();
    expect(s.records(policy).map((x) => x.amount), 'the fourth not before its time').to.deep.equal([100n, 200n, 300n]);
    const done = await noneEarlyNoneTwice(policy);
    expect(done.map((i) => Number(i.due_at))).to.deep.equal(stamps.slice(0, 3));
    expect(Number((await accountOf(s.h.rpc, policy))['payment_count'])).to.equal(3);
  });

  it('paused and resumed with no read model: the chain sweep finds the policy Active again and the owed period is paid', async () => {
    const scheduler = s.scheduler();
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    const policy = r.paid!.policy!;
    await waitFor(async () => s.records(policy).length >= 2, 30_000, 'a scheduled payment');
    await setPolicyStatus(s.h.rpc, payer, policy, r.paid!.requirement.tokenMint, 'Paused');
    // the due date the pause froze (a short period may have been paid just before it landed)
    const due = await nextDue(policy);
    const paid = s.records(policy).length;
    await waitFor(async () => (await intents(policy)).some((i) => Number(i.due_at) === due && i.status === 'paused'), 20_000, 'the owed period parked');
    await setPolicyStatus(s.h.rpc, payer, policy, r.paid!.requirement.tokenMint, 'Active');
    expect(s.records(policy), 'nothing paid while paused').to.have.length(paid);
    await waitFor(async () => s.records(policy).length >= paid + 1, 20_000, 'the owed period paid after the resume');
    await scheduler.stop();
    expect((await intents(policy)).find((i) => Number(i.due_at) === due)?.status).to.equal('executed');
    await noneEarlyNoneTwice(policy);
  });
});
