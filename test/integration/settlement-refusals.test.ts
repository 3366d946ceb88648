/**
 * Every metered chunk is either charged or reported as unbillable with the chain's
 * reason. Three pay-as-you-go payers stop paying after their requests were metered: one
 * revokes the delegation (the chain refuses NoDelegateSet: retried on the retry schedule,
 * then given up), one pauses the policy (its usage waits as long as the schedule, then is
 * given up), one deletes it (unbillable once a second read, PAYG_ABSENCE_CONFIRM_MS later,
 * confirms it). A fourth keeps paying and is charged in full. For each: charged on chain + unbillable = metered, no chunk left over, and every
 * refusal kept as an attempt with the chain's reason; status and /metrics show the
 * unbillable usage.
 */
import { expect } from 'chai';
import { PublicKey, Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { associatedTokenAddress, revokeIx } from '../../src/kernel/domain/spl-token.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { reportLines, schedulerReport } from '../../commands/scheduler/report.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;

describe('pay-as-you-go: refused charges end charged or unbillable with the chain\'s reason', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('payg-refuse', {
      ...demoPaygEnv(PRICE, 300),
      SCHEDULER_DUNNING_SCHEDULE: '400ms,400ms',
    });
  });
  after(async () => { await s?.close(); });

  const metered = async (requests: number) => {
    const payer = s.h.payer();
    const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    for (let i = 1; i < requests; i += 1) {
      const res = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${r.paid!.jwt}` } });
      expect(res.status).to.equal(200);
    }
    return { payer, policy: r.paid!.policy!, mint: new PublicKey(r.paid!.requirement.tokenMint) };
  };
  const send = async (payer: Keypair, ix: TransactionInstruction) => {
    const { value } = await s.h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(ix);
    tx.sign(payer);
    await s.h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
  };
  const policyId = async (policy: string) => {
    const acc = await readProgramAccount(s.h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    return acc.kind === 'found' ? Number(acc.data['policy_id']) : 0;
  };
  const usage = (policy: string) => s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
  const attempts = (policy: string) => s.h.env.db.selectFrom('execution_attempts').selectAll().where('policy', '=', policy).orderBy('id').execute();
  const charged = (policy: string) => s.records(policy).reduce((a, r) => a + r.amount, 0n);
  const settled = async (policy: string) => {
    const executed = new Set((await s.h.env.db.selectFrom('payg_charges').select('id').where('policy', '=', policy).where('status', '=', 'executed').execute()).map((c) => c.id));
    const rows = await usage(policy);
    return rows.every((u) => u.unbillable_reason !== null || (u.charge_id !== null && executed.has(u.charge_id)));
  };
  /** the invariant: every chunk charged (in an executed charge) or unbillable, and charged + unbillable = metered */
  const accountFor = async (policy: string, requests: number) => {
    const rows = await usage(policy);
    expect(rows).to.have.length(requests);
    const unbillable = rows.filter((u) => u.unbillable_reason !== null).reduce((a, u) => a + BigInt(u.chunk), 0n);
    expect(charged(policy) + unbillable, 'charged + unbillable = metered').to.equal(BigInt(requests) * PRICE);
    return rows;
  };

  it('revoked delegation: refused NoDelegateSet on the retry schedule, then given up and marked with the chain\'s reason', async () => {
    const { payer, policy, mint } = await metered(5);
    await send(payer, revokeIx(associatedTokenAddress(payer.publicKey.toBase58(), mint.toBase58()), payer.publicKey.toBase58()));
    const settler = s.settler();
    await waitFor(() => settled(policy), 40_000, 'every chunk settled one way or the other');
    await settler.stop();
    const rows = await accountFor(policy, 5);
    expect(charged(policy)).to.equal(0n);
    for (const u of rows) expect(u.unbillable_reason).to.match(/NoDelegateSet \(6008\).*refused 3 times; the retry schedule is spent/);
    const tries = await attempts(policy);
    expect(tries.every((a) => a.charge_id !== null && a.reason_code === 'NoDelegateSet')).to.equal(true);
    // two charges (30,000 then 20,000), each refused twice on the schedule and given up at the third refusal
    expect(tries.map((a) => a.outcome)).to.deep.equal(['past_due', 'past_due', 'given_up', 'past_due', 'past_due', 'given_up']);
  });

  it('paused: the usage waits as long as the retry schedule, then is given up as PolicyPaused', async () => {
    const { payer, policy, mint } = await metered(3);
    const up = pdas.userPayment(payer.publicKey, mint);
    await send(payer, tributaryIx('change_payment_policy_status', {
      owner: payer.publicKey, user_payment: up, token_mint: mint, payment_policy: new PublicKey(policy), config: pdas.config(),
    }, { policy_id: await policyId(policy), new_status: { Paused: {} } }));
    const settler = s.settler();
    await waitFor(() => settled(policy), 40_000, 'the paused policy\'s usage settled');
    await settler.stop();
    const rows = await accountFor(policy, 3);
    for (const u of rows) expect(u.unbillable_reason).to.match(/^PolicyPaused \(6009\): the policy stayed paused past the retry schedule/);
    const tries = await attempts(policy);
    expect(tries.map((a) => [a.outcome, a.reason_code])).to.deep.equal([['given_up', 'PolicyPaused']]);
    const oldest = Math.min(...rows.map((u) => u.metered_at.getTime()));
    expect(tries[0]!.at.getTime() - oldest, 'not before the schedule (800 ms) ran out since the oldest chunk').to.be.at.least(800);
  });

  it('deleted: unbillable once a later read confirms it (PAYG_ABSENCE_CONFIRM_MS), with the reason; a paying policy beside it is charged in full', async () => {
    const gone = await metered(2);
    const paying = await metered(4);
    const up = pdas.userPayment(gone.payer.publicKey, gone.mint);
    await send(gone.payer, tributaryIx('delete_payment_policy', {
      owner: gone.payer.publicKey, user_payment: up, token_mint: gone.mint, payment_policy: new PublicKey(gone.policy), config: pdas.config(),
      rent_payer: gone.payer.publicKey,
    }, { policy_id: await policyId(gone.policy) }));
    const settler = s.settler();
    await waitFor(async () => (await settled(gone.policy)) && (await settled(paying.policy)), 40_000, 'both settled');
    await settler.stop();
    for (const u of await accountFor(gone.policy, 2)) expect(u.unbillable_reason).to.match(/no payment policy at .* \(deleted\)/);
    expect((await attempts(gone.policy)).map((a) => [a.outcome, a.reason_code])).to.deep.equal([['dropped', 'PolicyNotFound']]);
    expect(charged(paying.policy)).to.equal(4n * PRICE);
    expect((await accountFor(paying.policy, 4)).every((u) => u.unbillable_reason === null)).to.equal(true);
    expect((await attempts(paying.policy)).every((a) => a.outcome === 'executed')).to.equal(true);
  });

  it('status and /metrics show the unbillable usage and the refusals by reason', async () => {
    const r = await schedulerReport(s.h.env.db, s.io, s.config.scheduler.signerMinLamports);
    expect(r.unbillableUsage).to.equal(String(10n * PRICE));
    // failed attempts by reason: the refusals (a deleted policy is dropped, not failed)
    expect(r.failedByReason).to.include({ NoDelegateSet: 6, PolicyPaused: 1 });
    expect(reportLines(r).join('\n')).to.include(`unbillable ${10n * PRICE}`);
    const metrics = await (await fetch(`${s.h.api.url}/metrics`)).text();
    expect(metrics).to.include(`tributary_payg_unbillable ${10n * PRICE}`);
  });
});
