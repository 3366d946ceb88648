/**
 * execute_payment as the program runs it (PROGRAM.md §1–2): who may call, the account
 * checks in declaration order, the schedule, the fee split, the delegation and balance
 * checks, then the token transfers (CPIs signed by the delegate PDA) and the bookkeeping.
 */
import type { PublicKey } from '@solana/web3.js';
import BN from 'bn.js';
import { OTHER_PROGRAM_ID, PROGRAM_ID, TOKEN_PROGRAM_ID } from '../constants.js';
import { keyString, pdas } from '../keys.js';
import { readTokenAccount, type TokenAccount } from '../spl.js';
import { runtimeErrorText, tokenTransfer, TokenFailure } from '../token-program.js';
import { load } from './accounts.js';
import type { IxContext } from './context.js';
import { CpiError, frameworkError, programError } from './errors.js';
import { splitFees } from './fees.js';
import { status, statusName, type PaymentGateway, type PolicyStatus } from './model.js';
import { charge } from './schedule.js';
import { writeProgramAccount } from './store.js';

/** Only Active policies are charged; Paused and Completed alike fail with PolicyPaused. */
export function requireChargeable(s: PolicyStatus): void {
  if (statusName(s) !== 'Active') throw programError('PolicyPaused');
}

const TOKEN = TOKEN_PROGRAM_ID.toBase58();
/**
 * Keys the emulation appends after the real remaining accounts (the event authority and
 * program of a self-CPI event, a decoy program): not part of what the program reads.
 */
const EMULATION_KEYS = new Set([pdas.eventAuthority().toBase58(), PROGRAM_ID.toBase58(), OTHER_PROGRAM_ID.toBase58()]);

/** Anchor's Account<TokenAccount>: present, owned by the token program, deserializable. */
export function loadToken(ctx: IxContext, name: string, address: PublicKey = ctx.account(name)): TokenAccount {
  const acc = ctx.view.get(keyString(address));
  if (!acc) throw frameworkError('AccountNotInitialized', name);
  if (acc.owner !== TOKEN) throw frameworkError('AccountOwnedByWrongProgram', name);
  const t = readTokenAccount(acc.data);
  if (!t) throw frameworkError('AccountDidNotDeserialize', name);
  return t;
}

const toBig = (v: BN): bigint => BigInt(v.toString());

/** A transfer CPI by the delegate PDA, framed in the logs as the runtime frames a CPI. */
function transfer(ctx: IxContext, from: PublicKey, to: PublicKey, delegate: PublicKey, amount: bigint): void {
  if (amount === 0n) return;
  ctx.logRaw(`Program ${TOKEN} invoke [2]`);
  ctx.logRaw('Program log: Instruction: Transfer');
  try {
    tokenTransfer(ctx.view, from, to, delegate, amount, true);
  } catch (err) {
    if (!(err instanceof TokenFailure)) throw err;
    if (err.logLine) ctx.logRaw(err.logLine);
    const text = runtimeErrorText(err.error);
    ctx.logRaw(`Program ${TOKEN} failed: ${text}`);
    throw new CpiError(err.error, text);
  }
  ctx.logRaw(`Program ${TOKEN} consumed 4645 of 180000 compute units`);
  ctx.logRaw(`Program ${TOKEN} success`);
}

export function executePayment(ctx: IxContext): void {
  const policyAddress = ctx.account('payment_policy');
  const policy = load(ctx, 'payment_policy', 'PaymentPolicy');
  const up = load(ctx, 'user_payment', 'UserPayment');
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  const config = load(ctx, 'config', 'ProgramConfig');
  const userToken = loadToken(ctx, 'user_token_account');
  const recipientToken = loadToken(ctx, 'recipient_token_account');
  const gatewayFeeToken = loadToken(ctx, 'gateway_fee_account');
  const protocolToken = loadToken(ctx, 'protocol_fee_account');

  // account constraints, in declaration order
  const caller = ctx.account('fee_payer');
  const role = caller.equals(gateway.signer) ? 'gateway' : caller.equals(up.owner) ? 'owner' : caller.equals(policy.recipient) ? 'recipient' : undefined;
  if (!role) throw frameworkError('ConstraintRaw', 'fee_payer');
  requireChargeable(policy.status);
  if (!up.is_active) throw frameworkError('ConstraintRaw', 'user_payment');
  if (!gateway.is_active || !ctx.account('gateway').equals(policy.gateway)) throw frameworkError('ConstraintRaw', 'gateway');
  if (config.emergency_pause) throw frameworkError('ConstraintRaw', 'config');
  const userTokenAddress = ctx.account('user_token_account');
  if (!userTokenAddress.equals(up.token_account) || !userToken.mint.equals(up.token_mint)) {
    throw frameworkError('ConstraintRaw', 'user_token_account');
  }
  const userPaymentPda = ctx.account('user_payment');
  const delegate = userToken.delegate;
  if (!delegate || !(delegate.equals(pdas.paymentsDelegate()) || delegate.equals(userPaymentPda))) throw programError('NoDelegateSet');
  if (!ctx.account('mint').equals(up.token_mint)) throw programError('TokenMintMismatch');
  const owned: [TokenAccount, PublicKey, string][] = [
    [recipientToken, policy.recipient, 'recipient_token_account'],
    [gatewayFeeToken, gateway.fee_recipient, 'gateway_fee_account'],
    [protocolToken, config.fee_recipient, 'protocol_fee_account'],
  ];
  for (const [t, owner, name] of owned) {
    if (!t.mint.equals(up.token_mint) || !t.owner.equals(owner)) throw frameworkError('ConstraintRaw', name);
  }

  // the handler
  const requested = (ctx.args.payment_amount as BN | null) ?? null;
  const c = charge(policy.policy_type, requested, ctx.clock.scheduleNow, {
    caller, gatewaySigner: gateway.signer, owner: up.owner, recipient: policy.recipient,
  });
  const usageBased = 'PayAsYouGo' in policy.policy_type || 'UpTo' in policy.policy_type;
  if (role === 'recipient' && !usageBased) throw programError('Unauthorized');
  const amount = toBig(c.amount);
  const fees = splitFees({
    amount, gatewayFeeBps: gateway.gateway_fee_bps, featureFlags: gateway.feature_flags,
    protocolShareBps: config.protocol_share_bps, customProtocolShareBps: gateway.custom_protocol_share_bps,
    schedulerShareBps: gateway.scheduler_share_bps, referralAllocationBps: gateway.referral_allocation_bps,
  });
  if (userToken.delegatedAmount < fees.totalFromUser) throw programError('InsufficientDelegatedAmount');
  if (userToken.amount < fees.totalFromUser) throw programError('InsufficientBalance');
  let remaining = ctx.remaining.map((m) => m.pubkey).filter((k) => !EMULATION_KEYS.has(keyString(k)));
  let schedulerAccount: PublicKey | undefined;
  if (role !== 'gateway' && gateway.scheduler_share_bps > 0) {
    schedulerAccount = remaining[remaining.length - 1];
    if (!schedulerAccount) throw programError('MissingSchedulerFeeAccount');
    remaining = remaining.slice(0, -1);
  }
  if (schedulerAccount && fees.scheduler > 0n) {
    const data = ctx.view.get(keyString(schedulerAccount))?.data;
    const ok = data && data.length >= 64 && data.subarray(0, 32).equals(up.token_mint.toBuffer()) && data.subarray(32, 64).equals(caller.toBuffer());
    if (!ok) throw programError('InvalidSchedulerFeeAccount');
  }

  // events and updated_at carry Clock::unix_timestamp, the block's time (execute_payment.rs),
  // even where the workload's accelerated schedule clock decided the payment was due
  const now = new BN(ctx.clock.now);
  const rewards = referralRewards(gateway, fees.referralPool, remaining);
  if (rewards) {
    ctx.emit('ReferralRewardDistributedRecord', {
      payment_policy: policyAddress, gateway: ctx.account('gateway'), payment_amount: c.amount, timestamp: now, rewards,
    });
    for (const r of rewards) {
      if (r) transfer(ctx, userTokenAddress, pdas.associatedToken(r.pubkey, up.token_mint), delegate, toBig(r.reward));
    }
  }
  transfer(ctx, userTokenAddress, ctx.account('recipient_token_account'), delegate, fees.recipient);
  if (role === 'gateway') {
    transfer(ctx, userTokenAddress, ctx.account('gateway_fee_account'), delegate, fees.gatewayResidual + fees.scheduler);
  } else {
    if (schedulerAccount) transfer(ctx, userTokenAddress, schedulerAccount, delegate, fees.scheduler);
    transfer(ctx, userTokenAddress, ctx.account('gateway_fee_account'), delegate, fees.gatewayResidual);
  }
  transfer(ctx, userTokenAddress, ctx.account('protocol_fee_account'), delegate, fees.protocol);

  const count = policy.payment_count + 1;
  writeProgramAccount(ctx.view, policyAddress, 'PaymentPolicy', {
    ...policy, policy_type: c.next, status: c.completes ? status('Completed') : policy.status,
    total_paid: policy.total_paid.add(new BN(fees.totalFromUser.toString())), payment_count: count, updated_at: now,
  });
  // the program's own account of the split (msg! after the event); the scheduler cut shows only when paid out
  const split = { recipient_amount: fees.recipient, gateway_residual: fees.gatewayResidual, scheduler_cut: role === 'gateway' ? 0n : fees.scheduler, protocol_cut: fees.protocol };
  ctx.emit('PaymentRecord', {
    payment_policy: policyAddress, gateway: ctx.account('gateway'), amount: c.amount, timestamp: now,
    memo: policy.memo, record_id: count, payer: up.owner, recipient: policy.recipient, token_mint: up.token_mint,
  }, { fee_split: Object.fromEntries(Object.entries(split).map(([k, v]) => [k, v.toString()])) });
  ctx.log(`Payment executed: ${split.recipient_amount} -> recipient, ${split.gateway_residual} gateway fee, ${split.scheduler_cut} scheduler cut, ${split.protocol_cut} protocol fee`);
}

/**
 * The referral split: the pool divided by the gateway's tiers among up to three
 * referrers. The emulator takes the referrers' wallets as remaining accounts and pays
 * their associated token accounts (the real program walks a chain of ReferralAccounts);
 * what is not distributed stays with the payer.
 */
export function referralRewards(
  gateway: PaymentGateway, pool: bigint, referrers: PublicKey[],
): ({ pubkey: PublicKey; reward: BN } | null)[] | undefined {
  if (gateway.referral_allocation_bps === 0 || pool === 0n || referrers.length === 0) return undefined;
  return [0, 1, 2].map((tier) => {
    const pubkey = referrers[tier];
    const share = BigInt(gateway.referral_tiers_bps[tier] ?? 0);
    return pubkey ? { pubkey, reward: new BN(((pool * share) / 10_000n).toString()) } : null;
  });
}
