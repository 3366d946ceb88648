/** Composable policies: a payment policy whose funds are forwarded through a pinned CPI. */
import { PublicKey } from '@solana/web3.js';
import BN from 'bn.js';
import { bumpOf, pdas } from '../keys.js';
import { load, liveConfig, mustBeFree, requireKey } from './accounts.js';
import type { IxContext } from './context.js';
import { frameworkError, programError } from './errors.js';
import { status, statusName, zeros, type ForwardConfig, type PolicyType, type ValidationSpec } from './model.js';
import { requireChargeable } from './handlers-payments.js';
import { changePolicyStatus, deletePolicy } from './handlers-user.js';
import { admitPolicyType, charge } from './schedule.js';
import { writeProgramAccount } from './store.js';

const isProgramCall = (v: ValidationSpec): boolean => 'ProgramCall' in v;

export function createComposablePolicy(ctx: IxContext): void {
  liveConfig(ctx);
  const upAddress = ctx.account('user_payment');
  const up = load(ctx, 'user_payment', 'UserPayment');
  requireKey(ctx.account('user'), up.owner);
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  if (!gateway.is_active) throw programError('Unauthorized', 'gateway');
  const policyId = up.created_composable_count + 1;
  const address = ctx.account('composable_policy');
  if (!address.equals(pdas.composablePolicy(upAddress, policyId))) throw frameworkError('ConstraintSeeds', 'composable_policy');
  mustBeFree(ctx, address);
  const forward = ctx.args.forward_config as ForwardConfig;
  const pre = ctx.args.pre_validation as ValidationSpec;
  const post = ctx.args.post_validation as ValidationSpec;
  if ('Inline' in pre || 'Inline' in post) throw programError('InlineValidationNotImplemented');
  const forwardDisabled = forward.instruction_constraint.program_id.equals(PublicKey.default);
  if (forwardDisabled && !forward.input_mint.equals(forward.output_mint)) throw programError('ForwardDisabledRequiresSameMint');
  const policyType: PolicyType = admitPolicyType(ctx.args.policy_type as PolicyType, ctx.clock.now);
  const memo = ctx.args.memo as number[];
  const recipient = ctx.account('recipient');
  const now = new BN(ctx.clock.now);
  writeProgramAccount(ctx.view, address, 'ComposablePolicy', {
    bump: bumpOf(address), user_payment: upAddress, gateway: ctx.account('gateway'), status: status('Active'),
    rent_payer: ctx.account('fee_payer'), policy_type: policyType, forward_config: forward, pre_validation: pre,
    post_validation: post, memo, recipient, total_input: new BN(0), total_output: new BN(0), payment_count: 0,
    policy_id: policyId, created_at: now, updated_at: now, padding: zeros(192),
  });
  writeProgramAccount(ctx.view, upAddress, 'UserPayment', {
    ...up, created_composable_count: policyId, active_composable_count: up.active_composable_count + 1, updated_at: now,
  });
  ctx.emit('ComposablePolicyCreated', {
    composable_policy: address, user_payment: upAddress, gateway: ctx.account('gateway'), recipient,
    policy_id: policyId, policy_type: policyType, memo, forward_config: forward, pre_validation: pre,
    post_validation: post, has_pre_validation_pda: isProgramCall(pre), has_post_validation_pda: isProgramCall(post),
  });
}

export function changeComposableStatus(ctx: IxContext): void {
  const { address, from, to } = changePolicyStatus(ctx, 'composable_policy', 'ComposablePolicy', (policy) => {
    load(ctx, 'gateway', 'PaymentGateway');
    if (!policy.gateway.equals(ctx.account('gateway'))) throw frameworkError('ConstraintRaw', 'gateway');
  });
  ctx.emit('ComposablePolicyStatusChanged', { composable_policy: address, old_status: from, new_status: to });
}

export function deleteComposablePolicy(ctx: IxContext): void {
  // an Active composable policy must be paused before it is deleted
  const { address, policy } = deletePolicy(ctx, 'composable_policy', 'ComposablePolicy', 'active_composable_count', (p) => {
    if (statusName(p.status) === 'Active') throw programError('InvalidPolicyStatusTransition', 'composable_policy');
  });
  ctx.emit('ComposablePolicyDeleted', { composable_policy: address, user_payment: ctx.account('user_payment'), policy_id: policy.policy_id });
}

export function executeComposable(ctx: IxContext): void {
  const config = load(ctx, 'config', 'ProgramConfig');
  // execution is gated by a raw constraint on the config, not ProgramPaused (PROGRAM.md §6)
  if (config.emergency_pause) throw frameworkError('ConstraintRaw', 'config');
  const address = ctx.account('composable_policy');
  const policy = load(ctx, 'composable_policy', 'ComposablePolicy');
  const up = load(ctx, 'user_payment', 'UserPayment');
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  if (!policy.gateway.equals(ctx.account('gateway'))) throw frameworkError('ConstraintHasOne', 'gateway');
  requireKey(ctx.account('mint'), up.token_mint, 'TokenMintMismatch');
  requireChargeable(policy.status);
  const forwardAmount = (ctx.args.forward_amount as BN | null) ?? null;
  const c = charge(policy.policy_type, forwardAmount, ctx.clock.scheduleNow, {
    caller: ctx.account('fee_payer'), gatewaySigner: gateway.signer, owner: up.owner, recipient: policy.recipient,
  });
  const gatewayFee = c.amount.muln(gateway.gateway_fee_bps).divn(10_000);
  const protocolFee = c.amount.muln(config.protocol_share_bps).divn(10_000);
  const output = c.amount.sub(gatewayFee).sub(protocolFee);
  // Clock::unix_timestamp, the block's time (execute_composable.rs), not the workload's schedule clock
  const now = new BN(ctx.clock.now);
  const count = policy.payment_count + 1;
  writeProgramAccount(ctx.view, address, 'ComposablePolicy', {
    ...policy, policy_type: c.next, status: c.completes ? status('Completed') : policy.status,
    total_input: policy.total_input.add(c.amount), total_output: policy.total_output.add(output),
    payment_count: count, updated_at: now,
  });
  ctx.emit('ComposableExecuted', {
    composable_policy: address, gateway: ctx.account('gateway'),
    target_program: policy.forward_config.instruction_constraint.program_id, input_amount: c.amount,
    output_amount: output, gateway_fee: gatewayFee, protocol_fee: protocolFee, recipient: policy.recipient,
    timestamp: now, record_id: count,
  });
}
