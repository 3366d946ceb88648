/**
 * The localnet creates and deletes policies by the Tributary program's rules, no more
 * permissive: each creation check of PolicyType::validate, the adjustments the program
 * makes (and those it does not), and which policies may be deleted. Every instruction
 * travels the localnet's JSON-RPC and is refused with the program's own error.
 */
import { expect } from 'chai';
import type { Keypair, PublicKey } from '@solana/web3.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { bn, status, type PaymentPolicy } from '../../infra/localnet/program/model.js';
import {
  approveOwnIx, createComposableIx, createPolicyIxs, executeIx, milestone, oneTime, payg, programAccount, startRulesNet, subscription,
  USDC, type RulesNet, type Sent,
} from '../support/localnet-program-rpc.js';

describe('localnet program rules: policy creation and deletion', function () {
  this.timeout(60_000);
  let net: RulesNet;
  let owner: Keypair;
  let merchant: PublicKey;
  before(async () => {
    net = await startRulesNet('program-rules-policies');
    owner = net.actors.spare[0]!;
    merchant = net.actors.merchants[0]!.publicKey;
  });
  after(async () => { await net.close(); });

  const gateway = (): RulesNet['actors']['gateways'][number] => net.actors.gateways[1]!;
  const create = async (policyType: object): Promise<Sent & { policy: PublicKey }> => {
    const s = createPolicyIxs(net, owner.publicKey, gateway().address, merchant, policyType);
    return { ...(await net.send(owner, s.ixs)), policy: s.policy };
  };
  const stored = (policy: PublicKey): PaymentPolicy | undefined => programAccount(net, policy, 'PaymentPolicy');

  // programs/tributary/src/policies/subscription.rs validate_subscription_policy:
  // amount > 0 (InvalidAmount), Custom(0) (InvalidFrequency), max_renewals = Some(0) (InvalidInterval)
  it('refuses a subscription that may renew zero times, a zero amount and a zero custom period', async () => {
    expect(await create(subscription(1_000, { maxRenewals: 0 }))).to.deep.include({ ok: false, error: 'InvalidInterval', code: 6010 });
    expect(await create(subscription(0))).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect(await create(subscription(1_000, { frequency: { Custom: { 0: bn(0) } } }))).to.deep.include({ ok: false, error: 'InvalidFrequency' });
    const once = await create(subscription(1_000, { maxRenewals: 1 }));
    expect(once.ok).to.equal(true);
    const s = stored(once.policy)?.policy_type;
    expect(s && 'Subscription' in s ? s.Subscription.max_renewals : undefined).to.equal(1);
  });

  // programs/tributary/src/policies/pay_as_you_go.rs validate_payg_policy: per-period cap > 0, chunk > 0,
  // chunk ≤ per-period cap (InvalidAmount), period 1..=i64::MAX (InvalidInterval);
  // instructions/payment/create_payment_policy.rs sets current_period_start = now and keeps the caller's current_period_total,
  // which shared/schedule.rs validate_policy_execution then counts against the cap in the first period
  it('refuses a pay-as-you-go chunk above its per-period cap, and counts the caller\'s current_period_total against the cap', async () => {
    expect(await create(payg(1_000, 1_001))).to.deep.include({ ok: false, error: 'InvalidAmount', code: 6001 });
    expect(await create(payg(1_000, 0))).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect(await create(payg(1_000, 100, { period: 0 }))).to.deep.include({ ok: false, error: 'InvalidInterval' });
    const p = await create(payg(1_000_000, 600_000, { periodTotal: 600_000 }));
    expect(p.ok).to.equal(true);
    const t = stored(p.policy)?.policy_type;
    const fields = t && 'PayAsYouGo' in t ? t.PayAsYouGo : undefined;
    expect(fields?.current_period_total.toString()).to.equal('600000');
    expect(Math.abs((fields?.current_period_start.toNumber() ?? 0) - Date.now() / 1000)).to.be.below(30);

    expect(await net.send(owner, [approveOwnIx(owner.publicKey, 10_000_000n)])).to.deep.include({ ok: true });
    const g = gateway();
    const charge = (amount: bigint): ReturnType<typeof executeIx> =>
      executeIx(net, { caller: g.signer.publicKey, owner: owner.publicKey, policy: p.policy, gateway: g, recipient: merchant, amount });
    expect(await net.send(g.signer, [charge(500_000n)])).to.deep.include({ ok: false, error: 'InsufficientDelegatedAmount', code: 6005 });
    expect(await net.send(g.signer, [charge(400_000n)])).to.deep.include({ ok: true });
    const after = stored(p.policy)?.policy_type;
    expect(after && 'PayAsYouGo' in after ? after.PayAsYouGo.current_period_total.toString() : undefined).to.equal('1000000');
  });

  // programs/tributary/src/policies/one_time.rs validate_one_time_policy: amount > 0; when an expiry is set and
  // due_date > 0 the expiry must be after the due date (InvalidPaymentDueDate); nothing compares either with the clock
  it('orders a one-time expiry after its due date, and accepts an expiry already past when no due date is set', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await create(oneTime(1_000, now + 3_600, now + 3_600))).to.deep.include({ ok: false, error: 'InvalidPaymentDueDate', code: 6012 });
    expect(await create(oneTime(1_000, now + 3_600, now + 60))).to.deep.include({ ok: false, error: 'InvalidPaymentDueDate' });
    expect(await create(oneTime(0, 0, null))).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect((await create(oneTime(1_000, now + 3_600, now + 7_200))).ok).to.equal(true);
    const lapsed = await create(oneTime(1_000, 0, now - 86_400));
    expect(lapsed.ok).to.equal(true);
    // the expiry bites at execution instead (shared/schedule.rs: now > expiry → PolicyExpired)
    expect(await net.send(owner, [approveOwnIx(owner.publicKey, 10_000_000n)])).to.deep.include({ ok: true });
    const g = gateway();
    const pay = executeIx(net, { caller: g.signer.publicKey, owner: owner.publicKey, policy: lapsed.policy, gateway: g, recipient: merchant });
    expect(await net.send(g.signer, [pay])).to.deep.include({ ok: false, error: 'PolicyExpired' });
  });

  // programs/tributary/src/policies/milestone.rs validate_milestone_policy (all InvalidAmount): 1 ≤ total ≤ 4,
  // current < total, escrow_amount > 0, the first `total` amounts > 0, at most one bit of release_condition
  // other than the due-date bit 0x01; the caller's current_milestone is stored as given
  it('refuses a milestone policy without escrow or with two signer bits, and keeps the caller\'s current milestone', async () => {
    const later = Math.floor(Date.now() / 1000) + 86_400;
    const stamps = [later, later + 60];
    expect(await create(milestone([100, 200], stamps, { escrow: 0 }))).to.deep.include({ ok: false, error: 'InvalidAmount', code: 6001 });
    for (const release of [0x06, 0x0a, 0x0c, 0x0f, 0x12]) {
      expect(await create(milestone([100, 200], stamps, { release })), `release ${release}`).to.deep.include({ ok: false, error: 'InvalidAmount' });
    }
    expect(await create(milestone([100, 200], stamps, { current: 2 }))).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect(await create(milestone([100, 0], stamps))).to.deep.include({ ok: false, error: 'InvalidAmount' });
    const accepted: number[] = [];
    for (const release of [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09]) {
      if ((await create(milestone([100, 200], stamps, { release }))).ok) accepted.push(release);
    }
    expect(accepted).to.deep.equal([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09]);
    const resumed = await create(milestone([100, 200], stamps, { current: 1, escrow: 1 }));
    expect(resumed.ok).to.equal(true);
    const t = stored(resumed.policy)?.policy_type;
    expect(t && 'Milestone' in t ? { current: t.Milestone.current_milestone, escrow: t.Milestone.escrow_amount.toString() } : undefined)
      .to.deep.equal({ current: 1, escrow: '1' });
  });

  // programs/tributary/src/instructions/composable/delete_composable_policy.rs:
  // `composable_policy.status != PolicyStatus::Active @ InvalidPolicyStatusTransition`
  it('refuses to delete an Active composable policy, and deletes it once paused', async () => {
    const g = gateway();
    const c = createComposableIx(net, owner.publicKey, g.address, merchant, subscription(1_000));
    expect(await net.send(owner, [c.ix])).to.deep.include({ ok: true });
    const up = pdas.userPayment(owner.publicKey, USDC);
    const remove = tributaryIx('delete_composable_policy', {
      owner: owner.publicKey, user_payment: up, composable_policy: c.policy, config: pdas.config(), rent_payer: owner.publicKey,
    }, { policy_id: c.policyId });
    expect(await net.send(owner, [remove])).to.deep.include({ ok: false, error: 'InvalidPolicyStatusTransition', code: 6004 });
    const pause = tributaryIx('change_composable_status', {
      owner: owner.publicKey, user_payment: up, composable_policy: c.policy, gateway: g.address, config: pdas.config(),
    }, { policy_id: c.policyId, new_status: status('Paused') });
    expect(await net.send(owner, [pause])).to.deep.include({ ok: true });
    expect(await net.send(owner, [remove])).to.deep.include({ ok: true });
    expect(programAccount(net, c.policy, 'ComposablePolicy')).to.equal(undefined);
  });
});
