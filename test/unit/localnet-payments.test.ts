/**
 * The localnet's execute_payment follows the program's rules (PROGRAM.md §1–2): the
 * calendar-month schedule with its carried clamp, the fee split in gross and net mode,
 * the scheduler cut's destination, each error by name, and the token movements.
 */
import { expect } from 'chai';
import { Keypair, type PublicKey } from '@solana/web3.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { addMonths, skipMonths } from '../../infra/localnet/program/calendar.js';
import { splitFees } from '../../infra/localnet/program/fees.js';
import { bn, zeros } from '../../infra/localnet/program/model.js';
import { nextPaymentDue } from '../../infra/localnet/program/schedule.js';
import { approveIx, createAtaIdempotentIx, revokeIx, transferIx } from '../../src/kernel/domain/spl-token.js';
import { createPolicyIxs, errorName, executeIx, startTestChain, USDC, type TestChain } from '../support/localnet-chain.js';

const at = (iso: string): number => Date.parse(iso) / 1000;
const iso = (unix: number): string => new Date(unix * 1000).toISOString();

const subscription = (amount: bigint, frequency: object, opts: { maxRenewals?: number | null; autoRenew?: boolean } = {}): object => ({
  Subscription: {
    amount: bn(amount), auto_renew: opts.autoRenew ?? true, max_renewals: opts.maxRenewals ?? null, payment_frequency: frequency,
    next_payment_due: bn(0), padding: zeros(97),
  },
});
const payg = (perPeriod: bigint, chunk: bigint, period: number): object => ({
  PayAsYouGo: {
    max_amount_per_period: bn(perPeriod), max_chunk_amount: bn(chunk), period_length_seconds: bn(period), current_period_start: bn(0),
    current_period_total: bn(0), expiry_date: null, padding: zeros(79),
  },
});

describe('localnet execute_payment', function () {
  this.timeout(30_000);

  describe('schedule', () => {
    it('steps calendar months, clamping the day and carrying the clamp (Jan 31 → Feb 29 → Mar 29)', () => {
      const jan31 = at('2024-01-31T10:30:00Z');
      expect(iso(addMonths(jan31, 1))).to.equal('2024-02-29T10:30:00.000Z');
      expect(iso(addMonths(addMonths(jan31, 1), 1))).to.equal('2024-03-29T10:30:00.000Z');
      expect(iso(addMonths(at('2023-01-31T00:00:00Z'), 1))).to.equal('2023-02-28T00:00:00.000Z');
      expect(iso(addMonths(at('2024-11-30T08:00:00Z'), 3))).to.equal('2025-02-28T08:00:00.000Z');
      expect(iso(addMonths(at('2024-02-29T00:00:00Z'), 12))).to.equal('2025-02-28T00:00:00.000Z');
    });

    it('skips missed periods to the first due date after now, never charging them', () => {
      const jan31 = at('2024-01-31T10:30:00Z');
      expect(iso(nextPaymentDue(jan31, { Monthly: {} }, jan31))).to.equal('2024-02-29T10:30:00.000Z');
      expect(iso(nextPaymentDue(jan31, { Monthly: {} }, at('2024-04-15T00:00:00Z')))).to.equal('2024-04-29T10:30:00.000Z');
      expect(iso(nextPaymentDue(jan31, { Quarterly: {} }, jan31))).to.equal('2024-04-30T10:30:00.000Z');
      expect(iso(nextPaymentDue(jan31, { Annually: {} }, jan31))).to.equal('2025-01-31T10:30:00.000Z');
      expect(nextPaymentDue(1_000, { Daily: {} }, 1_000 + 86_400 * 2 + 5)).to.equal(1_000 + 86_400 * 3);
      expect(nextPaymentDue(1_000, { Custom: { 0: bn(10) } }, 1_025)).to.equal(1_030);
      expect(() => skipMonths(0, 200 * 365 * 86_400, 1)).to.throw(/ArithmeticOverflow/);
    });
  });

  describe('fees', () => {
    it('splits gross: the recipient gets the amount less the fee; the residual absorbs rounding', () => {
      const base = { gatewayFeeBps: 250, featureFlags: 0, protocolShareBps: 2_000, customProtocolShareBps: 0, schedulerShareBps: 0, referralAllocationBps: 0 };
      const f = splitFees({ ...base, amount: 999n });
      expect(f).to.deep.include({ totalFee: 24n, protocol: 4n, scheduler: 0n, gatewayResidual: 20n, recipient: 975n, totalFromUser: 999n });
      const s = splitFees({ ...base, amount: 1_000_000n, schedulerShareBps: 1_500, featureFlags: 0x04, customProtocolShareBps: 500 });
      expect(s).to.deep.include({ totalFee: 25_000n, protocol: 1_250n, scheduler: 3_750n, gatewayResidual: 20_000n, recipient: 975_000n });
    });

    it('splits net (flag 0x02): the recipient gets the amount, the payer pays the fee on top', () => {
      const f = splitFees({ amount: 5_000_000n, gatewayFeeBps: 100, featureFlags: 0x02, protocolShareBps: 2_000, customProtocolShareBps: 0, schedulerShareBps: 0, referralAllocationBps: 0 });
      expect(f).to.deep.include({ totalFee: 50_000n, protocol: 10_000n, gatewayResidual: 40_000n, recipient: 5_000_000n, totalFromUser: 5_050_000n });
    });
  });

  describe('on chain', () => {
    let tc: TestChain;
    let user: Keypair;
    let merchant: PublicKey;
    const gw = (i: number): TestChain['actors']['gateways'][number] => tc.actors.gateways[i]!;
    const subscribe = (owner: Keypair, policyType: object, gateway = 0): { policy: PublicKey; userPayment: PublicKey } => {
      const s = createPolicyIxs(tc, owner.publicKey, gw(gateway).address, merchant, policyType);
      const landed = tc.land(owner, s.ixs);
      expect(landed.ok, landed.logs.join('\n')).to.equal(true);
      return s;
    };
    const execute = (caller: Keypair, s: { policy: PublicKey; userPayment: PublicKey }, owner: PublicKey, o: { gateway?: number; amount?: bigint; remaining?: PublicKey[] } = {}) =>
      tc.land(caller, [executeIx(tc, {
        caller: caller.publicKey, policy: s.policy, userPayment: s.userPayment, user: owner, gateway: gw(o.gateway ?? 0).address,
        recipient: merchant, gatewayFeeRecipient: gw(o.gateway ?? 0).feeRecipient.publicKey, amount: o.amount ?? null, ...(o.remaining ? { remaining: o.remaining } : {}),
      })]);
    const approve = (owner: Keypair, amount: bigint, delegate?: PublicKey): void => {
      const ata = pdas.associatedToken(owner.publicKey, USDC).toBase58();
      const d = delegate ?? pdas.userPayment(owner.publicKey, USDC);
      expect(tc.land(owner, [revokeIx(ata, owner.publicKey.toBase58()), approveIx(ata, d.toBase58(), owner.publicKey.toBase58(), amount)]).ok).to.equal(true);
    };

    beforeEach(() => {
      tc = startTestChain(`payments-${Math.random()}`, at('2027-01-31T12:00:00Z'));
      user = Keypair.fromSecretKey(tc.actors.spare[0]!.secretKey);
      merchant = tc.actors.spare[1]!.publicKey;
    });

    it('moves the amount from the payer to the recipient, the gateway fee recipient and the protocol by the fee formulas', () => {
      const s = subscribe(user, subscription(5_000_000n, { Monthly: {} }));
      approve(user, 60_000_000n);
      const before = [user.publicKey, merchant, gw(0).feeRecipient.publicKey, tc.actors.admin.publicKey].map((k) => tc.balance(k));
      const landed = execute(gw(0).signer, s, user.publicKey);
      expect(landed.ok, landed.logs.join('\n')).to.equal(true);
      expect(landed.events).to.deep.equal(['PaymentRecord']);
      const after = [user.publicKey, merchant, gw(0).feeRecipient.publicKey, tc.actors.admin.publicKey].map((k) => tc.balance(k));
      // 100 bps of 5 USDC = 50,000; protocol 20 % of it = 10,000; the gateway keeps 40,000
      expect(after.map((a, i) => a - before[i]!)).to.deep.equal([-5_000_000n, 4_950_000n, 40_000n, 10_000n]);
      expect(tc.token(user.publicKey)?.delegatedAmount).to.equal(55_000_000n);
      expect(errorName(execute(gw(0).signer, s, user.publicKey))).to.equal('PaymentNotDue');
      tc.setTime(at('2027-02-28T12:00:00Z'));
      expect(execute(gw(0).signer, s, user.publicKey).ok).to.equal(true);
      tc.setTime(at('2027-03-28T12:00:00Z'));
      expect(execute(gw(0).signer, s, user.publicKey).ok, 'the clamp to Feb 28 carries: Mar 28 is due').to.equal(true);
    });

    it('refuses without a delegate (NoDelegateSet), beyond the delegation (InsufficientDelegatedAmount) and beyond the balance (InsufficientBalance)', () => {
      const s = subscribe(user, subscription(5_000_000n, { Weekly: {} }));
      expect(errorName(execute(gw(0).signer, s, user.publicKey))).to.equal('NoDelegateSet');
      approve(user, 4_999_999n);
      expect(errorName(execute(gw(0).signer, s, user.publicKey))).to.equal('InsufficientDelegatedAmount');
      approve(user, 5_000_000n, pdas.paymentsDelegate());
      expect(execute(gw(0).signer, s, user.publicKey).ok, 'the legacy payments PDA is honored').to.equal(true);

      const poor = Keypair.fromSecretKey(tc.actors.unfunded.secretKey);
      expect(tc.token(poor.publicKey)).to.equal(undefined);
      expect(tc.land(poor, [createAtaIdempotentIx(poor.publicKey.toBase58(), poor.publicKey.toBase58(), USDC.toBase58())]).ok).to.equal(true);
      const p = subscribe(poor, subscription(1_000_000n, { Monthly: {} }));
      approve(poor, 12_000_000n);
      const refused = execute(poor, p, poor.publicKey);
      expect(errorName(refused)).to.equal('InsufficientBalance');
      expect(refused.logs.join('\n')).to.include('Error Number: 6007. Error Message: Insufficient balance for payment.');
    });

    it('lets only the gateway signer, the owner or (usage-based only) the recipient call', () => {
      const s = subscribe(user, subscription(1_000_000n, { Daily: {} }));
      approve(user, 10_000_000n);
      const stranger = Keypair.fromSecretKey(tc.actors.referrers[0]!.secretKey);
      const raw = execute(stranger, s, user.publicKey);
      expect(errorName(raw)).to.equal('ConstraintRaw');
      expect(errorName(execute(gw(0).authority, s, user.publicKey)), 'the authority is not the signer').to.equal('ConstraintRaw');
      const recipient = Keypair.fromSecretKey(tc.actors.spare[1]!.secretKey);
      expect(errorName(execute(recipient, s, user.publicKey))).to.equal('Unauthorized');
      expect(execute(user, s, user.publicKey).ok).to.equal(true);

      const m = subscribe(user, payg(3_000_000n, 1_000_000n, 3_600));
      expect(execute(recipient, m, user.publicKey, { amount: 500_000n }).ok, 'the recipient may draw pay-as-you-go').to.equal(true);
    });

    it('fails a paused policy with PolicyPaused, and an emergency pause as a raw constraint', () => {
      const s = subscribe(user, subscription(1_000_000n, { Daily: {} }));
      approve(user, 10_000_000n);
      const up = pdas.userPayment(user.publicKey, USDC);
      expect(tc.land(user, [tributaryIx('change_payment_policy_status', {
        owner: user.publicKey, user_payment: up, token_mint: USDC, payment_policy: s.policy, config: pdas.config(),
      }, { policy_id: 1, new_status: { Paused: {} } })]).ok).to.equal(true);
      expect(errorName(execute(gw(0).signer, s, user.publicKey))).to.equal('PolicyPaused');
      const p = subscribe(user, subscription(1_000_000n, { Daily: {} }));
      expect(tc.land(tc.actors.admin, [tributaryIx('set_emergency_pause', { admin: tc.actors.admin.publicKey, config: pdas.config() }, { paused: true })]).ok).to.equal(true);
      const paused = execute(gw(0).signer, p, user.publicKey);
      expect(errorName(paused)).to.equal('ConstraintRaw');
      expect(paused.logs.join('\n')).to.include('caused by account: config');
    });

    it('pays the scheduler cut to the owner-caller\'s last remaining account, or merges it into the gateway fee for the signer', () => {
      const g = gw(2);
      expect(tc.land(g.authority, [tributaryIx('update_gateway_scheduler_share', { gateway: g.address, authority: g.authority.publicKey, config: pdas.config() }, { scheduler_share_bps: 5_000 })]).ok).to.equal(true);
      const s = subscribe(user, subscription(10_000_000n, { Custom: { 0: bn(60) } }), 2);
      approve(user, 100_000_000n);
      expect(errorName(execute(user, s, user.publicKey, { gateway: 2 }))).to.equal('MissingSchedulerFeeAccount');
      const wrong = pdas.associatedToken(merchant, USDC);
      expect(errorName(execute(user, s, user.publicKey, { gateway: 2, remaining: [wrong] }))).to.equal('InvalidSchedulerFeeAccount');
      const own = pdas.associatedToken(user.publicKey, USDC);
      const fee0 = tc.balance(g.feeRecipient.publicKey);
      const u0 = tc.balance(user.publicKey);
      expect(execute(user, s, user.publicKey, { gateway: 2, remaining: [own] }).ok).to.equal(true);
      // 250 bps of 10 USDC = 250,000: protocol 50,000, scheduler (50 %) 125,000 back to the owner, gateway 75,000
      expect(tc.balance(g.feeRecipient.publicKey) - fee0).to.equal(75_000n);
      expect(u0 - tc.balance(user.publicKey)).to.equal(10_000_000n - 125_000n);
      tc.setTime(tc.now() + 61);
      const fee1 = tc.balance(g.feeRecipient.publicKey);
      expect(execute(g.signer, s, user.publicKey, { gateway: 2 }).ok).to.equal(true);
      expect(tc.balance(g.feeRecipient.publicKey) - fee1).to.equal(200_000n);
    });

    it('rolls a pay-as-you-go period over at the first charge after it elapsed', () => {
      const s = subscribe(user, payg(3_000_000n, 1_000_000n, 3_600));
      approve(user, 100_000_000n);
      expect(errorName(execute(gw(0).signer, s, user.publicKey, { amount: 1_000_001n }))).to.equal('InvalidAmount');
      expect(errorName(execute(gw(0).signer, s, user.publicKey))).to.equal('InvalidAmount');
      for (let i = 0; i < 3; i += 1) expect(execute(gw(0).signer, s, user.publicKey, { amount: 1_000_000n }).ok).to.equal(true);
      expect(errorName(execute(gw(0).signer, s, user.publicKey, { amount: 1n }))).to.equal('InsufficientDelegatedAmount');
      tc.setTime(tc.now() + 3_600);
      expect(execute(gw(0).signer, s, user.publicKey, { amount: 1_000_000n }).ok).to.equal(true);
      expect(execute(gw(0).signer, s, user.publicKey, { amount: 2_000_000n }).ok === false).to.equal(true);
    });

    it('completes a subscription when its renewals run out', () => {
      const s = subscribe(user, subscription(1_000_000n, { Custom: { 0: bn(10) } }, { maxRenewals: 2 }));
      approve(user, 10_000_000n);
      expect(execute(gw(0).signer, s, user.publicKey).ok).to.equal(true);
      tc.setTime(tc.now() + 10);
      expect(execute(gw(0).signer, s, user.publicKey).ok).to.equal(true);
      tc.setTime(tc.now() + 10);
      expect(errorName(execute(gw(0).signer, s, user.publicKey))).to.equal('PolicyPaused');
    });
  });

  describe('token program', () => {
    it('transfers by the owner, by a delegate within its amount, and revokes', () => {
      const tc = startTestChain('tokens');
      const owner = Keypair.fromSecretKey(tc.actors.spare[0]!.secretKey);
      const delegate = Keypair.fromSecretKey(tc.actors.spare[1]!.secretKey);
      const src = pdas.associatedToken(owner.publicKey, USDC).toBase58();
      const dst = pdas.associatedToken(delegate.publicKey, USDC).toBase58();
      const start = tc.balance(owner.publicKey);
      expect(tc.land(owner, [transferIx(src, dst, owner.publicKey.toBase58(), 7n)]).ok).to.equal(true);
      expect(tc.balance(owner.publicKey)).to.equal(start - 7n);
      expect(tc.land(owner, [approveIx(src, delegate.publicKey.toBase58(), owner.publicKey.toBase58(), 10n)]).ok).to.equal(true);
      const over = tc.land(delegate, [transferIx(src, dst, delegate.publicKey.toBase58(), 11n)]);
      expect(over.err).to.deep.equal({ InstructionError: [0, { Custom: 1 }] });
      expect(over.logs).to.include('Program log: Error: insufficient funds');
      expect(tc.land(delegate, [transferIx(src, dst, delegate.publicKey.toBase58(), 10n)]).ok).to.equal(true);
      expect(tc.token(owner.publicKey)).to.deep.include({ delegate: null, delegatedAmount: 0n });
      expect(tc.land(owner, [approveIx(src, delegate.publicKey.toBase58(), owner.publicKey.toBase58(), 5n), revokeIx(src, owner.publicKey.toBase58())]).ok).to.equal(true);
      expect(tc.token(owner.publicKey)?.delegate).to.equal(null);
      const stranger = tc.land(delegate, [transferIx(src, dst, delegate.publicKey.toBase58(), 1n)]);
      expect(stranger.err).to.deep.equal({ InstructionError: [0, { Custom: 4 }] });
    });
  });
});
