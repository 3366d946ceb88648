/** The instructions a user signs: user payments and payment policies. */
import BN from 'bn.js';
import { TOKEN_PROGRAM_ID } from '../constants.js';
import { bumpOf, pdas } from '../keys.js';
import { mintDecimals, readTokenAccount } from '../spl.js';
import { load, liveConfig, mustBeFree, rentDestination, requireKey } from './accounts.js';
import type { IxContext } from './context.js';
import { frameworkError, programError } from './errors.js';
import { status, statusName, zeros, type AccountTypes, type PolicyStatus, type PolicyType, type UserPayment } from './model.js';
import { admitPolicyType } from './schedule.js';
import { closeAccount, writeProgramAccount } from './store.js';

export function createUserPayment(ctx: IxContext): void {
  liveConfig(ctx);
  const owner = ctx.account('owner');
  const mint = ctx.account('token_mint');
  const tokenAccount = ctx.account('token_account');
  const mintAcc = ctx.view.get(mint.toBase58());
  if (!mintAcc || mintAcc.owner !== TOKEN_PROGRAM_ID.toBase58() || mintDecimals(mintAcc.data) === undefined) {
    throw frameworkError('AccountOwnedByWrongProgram', 'token_mint');
  }
  const tokenAcc = ctx.view.get(tokenAccount.toBase58());
  const parsed = tokenAcc && tokenAcc.owner === TOKEN_PROGRAM_ID.toBase58() ? readTokenAccount(tokenAcc.data) : undefined;
  if (!parsed || !parsed.mint.equals(mint) || !parsed.owner.equals(owner)) throw programError('InvalidTokenAccount');
  const address = ctx.account('user_payment');
  mustBeFree(ctx, address);
  const now = new BN(ctx.clock.now);
  writeProgramAccount(ctx.view, address, 'UserPayment', {
    owner, token_account: tokenAccount, token_mint: mint, active_policies_count: 0, created_at: now,
    updated_at: now, is_active: true, bump: bumpOf(address), created_policies_count: 0,
    rent_payer: ctx.account('fee_payer'), active_composable_count: 0, created_composable_count: 0, padding: zeros(212),
  });
  ctx.emit('UserPaymentCreated', { owner, token_account: tokenAccount, token_mint: mint });
}

export function deleteUserPayment(ctx: IxContext): void {
  const up = load(ctx, 'user_payment', 'UserPayment');
  requireKey(ctx.account('owner'), up.owner);
  if (up.active_policies_count > 0) throw programError('HasActivePolicies');
  if (up.active_composable_count > 0) throw programError('HasActiveComposables');
  liveConfig(ctx);
  const destination = rentDestination(ctx, up.rent_payer);
  closeAccount(ctx.view, ctx.account('user_payment'), destination);
  ctx.emit('UserPaymentDeleted', { user_payment: ctx.account('user_payment'), owner: up.owner, rent_payer: destination });
}

export function createPaymentPolicy(ctx: IxContext): void {
  liveConfig(ctx);
  const upAddress = ctx.account('user_payment');
  const up = load(ctx, 'user_payment', 'UserPayment');
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  if (!gateway.is_active) throw programError('Unauthorized', 'gateway');
  // the program derives the new policy's address from the count before the increment, plus one
  const policyId = up.created_policies_count + 1;
  const address = ctx.account('payment_policy');
  if (!address.equals(pdas.paymentPolicy(upAddress, policyId))) throw frameworkError('ConstraintSeeds', 'payment_policy');
  mustBeFree(ctx, address);
  const policyType: PolicyType = admitPolicyType(ctx.args.policy_type as PolicyType, ctx.clock.now);
  const memo = ctx.args.memo as number[];
  const now = new BN(ctx.clock.now);
  const recipient = ctx.account('recipient');
  writeProgramAccount(ctx.view, address, 'PaymentPolicy', {
    user_payment: upAddress, recipient, gateway: ctx.account('gateway'), policy_type: policyType,
    status: status('Active'), memo, total_paid: new BN(0), payment_count: 0, created_at: now, updated_at: now,
    policy_id: policyId, bump: bumpOf(address), rent_payer: ctx.account('fee_payer'), padding: zeros(223),
  });
  writeProgramAccount(ctx.view, upAddress, 'UserPayment', {
    ...up, created_policies_count: policyId, active_policies_count: up.active_policies_count + 1, updated_at: now,
  });
  ctx.emit('PaymentPolicyCreated', {
    user_payment: upAddress, recipient, gateway: ctx.account('gateway'), policy_id: policyId,
    policy_type: policyType, memo, created_policies_count: up.created_policies_count,
  });
}

/** Owners toggle Active and Paused; Completed is terminal and never set by hand. */
export function checkTransition(from: PolicyStatus, to: PolicyStatus): void {
  const a = statusName(from);
  const b = statusName(to);
  const ok = (a === 'Active' && b === 'Paused') || (a === 'Paused' && b === 'Active');
  if (!ok) throw programError('InvalidPolicyStatusTransition');
}

/** The two kinds of policy an owner pauses, resumes and deletes alike. */
type PolicyKind = 'PaymentPolicy' | 'ComposablePolicy';

/**
 * Sets the policy in `accountName` to the instruction's new_status, when the transition is
 * allowed and the program is not paused; `check` runs the policy's own account constraints.
 */
export function changePolicyStatus<K extends PolicyKind>(
  ctx: IxContext, accountName: string, kind: K, check?: (policy: AccountTypes[K]) => void,
): { address: ReturnType<IxContext['account']>; from: PolicyStatus; to: PolicyStatus } {
  load(ctx, 'user_payment', 'UserPayment');
  const policy = load(ctx, accountName, kind);
  check?.(policy);
  liveConfig(ctx);
  const next = ctx.args.new_status as PolicyStatus;
  checkTransition(policy.status, next);
  const address = ctx.account(accountName);
  writeProgramAccount(ctx.view, address, kind, { ...policy, status: next, updated_at: new BN(ctx.clock.now) });
  return { address, from: policy.status, to: next };
}

/**
 * Closes the policy in `accountName` (rent back to its payer) and lowers the user payment's
 * count of live ones; refused while the program is paused. `check` as for changePolicyStatus.
 */
export function deletePolicy<K extends PolicyKind>(
  ctx: IxContext, accountName: string, kind: K, count: 'active_policies_count' | 'active_composable_count',
  check?: (policy: AccountTypes[K]) => void,
): { address: ReturnType<IxContext['account']>; up: UserPayment; policy: AccountTypes[K] } {
  const up = load(ctx, 'user_payment', 'UserPayment');
  const policy = load(ctx, accountName, kind);
  check?.(policy);
  liveConfig(ctx);
  const address = ctx.account(accountName);
  closeAccount(ctx.view, address, rentDestination(ctx, policy.rent_payer));
  writeProgramAccount(ctx.view, ctx.account('user_payment'), 'UserPayment', {
    ...up, [count]: Math.max(0, up[count] - 1), updated_at: new BN(ctx.clock.now),
  });
  return { address, up, policy };
}

export function changePaymentPolicyStatus(ctx: IxContext): void {
  const { address, from, to } = changePolicyStatus(ctx, 'payment_policy', 'PaymentPolicy');
  ctx.emit('PaymentPolicyStatusChanged', { payment_policy: address, old_status: from, new_status: to });
}

export function deletePaymentPolicy(ctx: IxContext): void {
  const { address, up, policy } = deletePolicy(ctx, 'payment_policy', 'PaymentPolicy', 'active_policies_count');
  ctx.emit('PaymentPolicyDeleted', { payment_policy: address, owner: up.owner, policy_id: policy.policy_id });
}
