/**
 * Milestones as the program pays them (shared/schedule.rs): two milestones may share a
 * timestamp, and each is its own payment, so each gets its own intent (keyed by the
 * payment count, not the due date alone); a milestone whose release_condition names the
 * owner or the recipient as its signer is theirs to release, the program refuses the
 * gateway's signer (Unauthorized), and the scheduler never tries it.
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { approveIx, associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { accountOf, createMilestone, sendAs } from './scheduler-chain.js';

const DUE_DATE = 0b0001;
const GATEWAY = 0b0010;
const OWNER = 0b0100;
const RECIPIENT = 0b1000;

describe('scheduler: milestones of one timestamp each paid, those released by hand never pulled', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => { s = await startSchedulerHarness('sched-milestone', { X402_DEMO_FREQUENCY: 'Custom:3600' }); });
  after(async () => { await s?.close(); });

  const intents = (policy: string) => s.h.env.db.selectFrom('execution_intents').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const attempts = (policy: string) => s.h.env.db.selectFrom('execution_attempts').selectAll().where('policy', '=', policy).execute();

  it('pays milestones at T, T and T+2 in order, once each; never tries the owner\'s or the recipient\'s', async () => {
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(r.response.status).to.equal(200);
    const { tokenMint: mint, recipient } = r.paid!.requirement;
    const owner = payer.publicKey.toBase58();
    const userPayment = createPdaDeriver(s.config.solana.programId).userPayment(owner, mint);
    await sendAs(s.h.rpc, payer, approveIx(associatedTokenAddress(owner, mint), userPayment, owner, 1_000_000_000_000n));

    const t = Math.floor(Date.now() / 1000) + 3;
    const base = { mint, gateway: s.gateway, recipient };
    const shared = await createMilestone(s.h.rpc, payer, { ...base, amounts: [1000n, 2000n, 3000n], timestamps: [t, t, t + 2], releaseCondition: DUE_DATE | GATEWAY });
    const byOwner = await createMilestone(s.h.rpc, payer, { ...base, amounts: [500n], timestamps: [t], releaseCondition: DUE_DATE | OWNER });
    const byRecipient = await createMilestone(s.h.rpc, payer, { ...base, amounts: [700n], timestamps: [t], releaseCondition: RECIPIENT });

    const scheduler = s.scheduler();
    await waitFor(async () => s.records(shared).length >= 3, 40_000, 'the three milestones paid');
    // rounds enough for the scheduler to have met the hand-released ones at their due date
    await new Promise((res) => setTimeout(res, 3000));
    await scheduler.stop();

    expect(s.records(shared).map((x) => x.amount)).to.deep.equal([1000n, 2000n, 3000n]);
    expect((await accountOf(s.h.rpc, shared))['status']).to.equal('Completed');
    const rows = await intents(shared);
    expect(rows.filter((i) => i.status === 'executed').map((i) => [Number(i.due_at) - t, i.payment_index])).to.deep.equal([[0, 0], [0, 1], [2, 2]]);
    expect((await attempts(shared)).filter((a) => a.outcome !== 'executed'), 'no milestone refused or paid twice').to.have.length(0);
    for (const p of [byOwner, byRecipient]) {
      expect(s.records(p), 'not paid by the gateway\'s signer').to.have.length(0);
      expect(await intents(p), 'no intent at all').to.have.length(0);
      expect(await attempts(p), 'never tried').to.have.length(0);
    }
  });
});
