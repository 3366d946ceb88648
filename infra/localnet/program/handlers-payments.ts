/** execute_payment: charges a policy on its schedule and pays referrers. */
import type { PublicKey } from '@solana/web3.js';
import BN from 'bn.js';
import { load, liveConfig, requireKey } from './accounts.js';
import type { IxContext } from './context.js';
import { frameworkError, programError } from './errors.js';
import { status, statusName, type PaymentGateway, type PolicyStatus } from './model.js';
import { charge } from './schedule.js';
import { writeProgramAccount } from './store.js';

/** Active policies are charged; a paused one fails with PolicyPaused, a completed one as an invalid transition. */
export function requireChargeable(s: PolicyStatus): void {
  const name = statusName(s);
  if (name === 'Paused') throw programError('PolicyPaused');
  if (name === 'Completed') throw programError('InvalidPolicyStatusTransition');
}

export function executePayment(ctx: IxContext): void {
  liveConfig(ctx);
  const policyAddress = ctx.account('payment_policy');
  const policy = load(ctx, 'payment_policy', 'PaymentPolicy');
  const up = load(ctx, 'user_payment', 'UserPayment');
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  if (!policy.gateway.equals(ctx.account('gateway'))) throw frameworkError('ConstraintHasOne', 'gateway');
  requireKey(ctx.account('fee_payer'), gateway.signer);
  requireKey(ctx.account('mint'), up.token_mint, 'TokenMintMismatch');
  requireChargeable(policy.status);
  const requested = (ctx.args.payment_amount as BN | null) ?? null;
  const c = charge(policy.policy_type, policy.payment_count, requested, ctx.clock.scheduleNow);
  const now = new BN(ctx.clock.now);
  const count = policy.payment_count + 1;
  writeProgramAccount(ctx.view, policyAddress, 'PaymentPolicy', {
    ...policy, policy_type: c.next, status: c.completes ? status('Completed') : policy.status,
    total_paid: policy.total_paid.add(c.amount), payment_count: count, updated_at: now,
  });
  ctx.emit('PaymentRecord', {
    payment_policy: policyAddress, gateway: ctx.account('gateway'), amount: c.amount, timestamp: now,
    memo: policy.memo, record_id: count, payer: up.owner, recipient: policy.recipient, token_mint: up.token_mint,
  });
  const rewards = referralRewards(gateway, c.amount, ctx.remaining.map((m) => m.pubkey));
  if (rewards) {
    ctx.emit('ReferralRewardDistributedRecord', {
      payment_policy: policyAddress, gateway: ctx.account('gateway'), payment_amount: c.amount, timestamp: now, rewards,
    });
  }
}

/**
 * The referral split: the gateway's allocation of the payment, divided by its tiers among
 * up to three referrers. The emulator takes the referrers' wallets as remaining accounts
 * (the real program reads a chain of ReferralAccounts and their token accounts there).
 */
export function referralRewards(
  gateway: PaymentGateway, amount: BN, referrers: PublicKey[],
): ({ pubkey: PublicKey; reward: BN } | null)[] | undefined {
  if (gateway.referral_allocation_bps === 0 || referrers.length === 0) return undefined;
  const pool = amount.muln(gateway.referral_allocation_bps).divn(10_000);
  return [0, 1, 2].map((tier) => {
    const pubkey = referrers[tier];
    const bps = gateway.referral_tiers_bps[tier] ?? 0;
    return pubkey ? { pubkey, reward: pool.muln(bps).divn(10_000) } : null;
  });
}
