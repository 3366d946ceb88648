/**
 * The two policy models' readings of the program's events: payment policies and composable
 * policies are folded by the same logic (fold.ts) from different events. Each reading is a
 * switch over every event name, so a new event in the IDL fails to compile here until
 * someone decides what it means to the model.
 */
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { COMPOSABLE_MEMO_BYTES, PAYMENT_MEMO_BYTES, memoFromData } from '../../src/kernel/domain/memo.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { PolicyChange, PolicyKindSpec } from './fold.js';

function paymentChange(pda: PdaDeriver, e: TributaryEvent): PolicyChange | undefined {
  switch (e.name) {
    case 'PaymentPolicyCreated': {
      const d = e.data;
      return {
        kind: 'created',
        // policy_id is the new policy's id, the user payment's created_policies_count + 1 (the
        // event's created_policies_count is the count before the increment): the address seed
        address: pda.paymentPolicy(d.user_payment, d.policy_id),
        userPayment: d.user_payment, policyId: d.policy_id, gateway: d.gateway, recipient: d.recipient,
        policyType: d.policy_type, memo: memoFromData(d, PAYMENT_MEMO_BYTES), extra: null,
      };
    }
    case 'PaymentPolicyStatusChanged': return { kind: 'status', address: e.data.payment_policy, from: e.data.old_status, to: e.data.new_status };
    case 'PaymentPolicyDeleted': return { kind: 'deleted', address: e.data.payment_policy };
    case 'PaymentRecord':
      return { kind: 'executed', address: e.data.payment_policy, input: BigInt(e.data.amount), output: null, timestamp: BigInt(e.data.timestamp) };
    case 'ComposableExecuted': case 'ComposablePolicyCreated': case 'ComposablePolicyDeleted': case 'ComposablePolicyStatusChanged':
    case 'EmergencyPauseChanged': case 'GatewayFeeBpsChanged': case 'GatewayFeeRecipientChanged': case 'GatewaySignerChanged':
    case 'PaymentGatewayCreated': case 'PaymentGatewayDeleted': case 'ProgramAuthorityChanged': case 'ProgramConfigCreated':
    case 'ReferralRewardDistributedRecord': case 'UserPaymentCreated': case 'UserPaymentDeleted':
      return undefined;
    default:
      return assertNever(e);
  }
}

function composableChange(_pda: PdaDeriver, e: TributaryEvent): PolicyChange | undefined {
  switch (e.name) {
    case 'ComposablePolicyCreated': {
      const d = e.data;
      return {
        kind: 'created',
        // the event names its address; it is PDA("composable_policy", user_payment, policy_id)
        address: d.composable_policy,
        userPayment: d.user_payment, policyId: d.policy_id, gateway: d.gateway, recipient: d.recipient,
        policyType: d.policy_type, memo: memoFromData(d, COMPOSABLE_MEMO_BYTES),
        // variant-independent extras kept as JSON
        extra: {
          forward_config: d.forward_config,
          pre_validation: d.pre_validation,
          post_validation: d.post_validation,
          has_pre_validation_pda: d.has_pre_validation_pda,
          has_post_validation_pda: d.has_post_validation_pda,
        },
      };
    }
    case 'ComposablePolicyStatusChanged': return { kind: 'status', address: e.data.composable_policy, from: e.data.old_status, to: e.data.new_status };
    case 'ComposablePolicyDeleted': return { kind: 'deleted', address: e.data.composable_policy };
    case 'ComposableExecuted': {
      const d = e.data;
      return { kind: 'executed', address: d.composable_policy, input: BigInt(d.input_amount), output: BigInt(d.output_amount), timestamp: BigInt(d.timestamp) };
    }
    case 'EmergencyPauseChanged': case 'GatewayFeeBpsChanged': case 'GatewayFeeRecipientChanged': case 'GatewaySignerChanged':
    case 'PaymentGatewayCreated': case 'PaymentGatewayDeleted': case 'PaymentPolicyCreated': case 'PaymentPolicyDeleted':
    case 'PaymentPolicyStatusChanged': case 'PaymentRecord': case 'ProgramAuthorityChanged': case 'ProgramConfigCreated':
    case 'ReferralRewardDistributedRecord': case 'UserPaymentCreated': case 'UserPaymentDeleted':
      return undefined;
    default:
      return assertNever(e);
  }
}

const payment = {
  policies: 'payment_policies', owners: 'payment_policy_user_payments', history: 'payment_policy_status_history',
} as const;
const composable = {
  policies: 'composable_policies', owners: 'composable_policy_user_payments', history: 'composable_policy_status_history',
} as const;

export const paymentPolicySpec: PolicyKindSpec = { kind: 'payment', changeOf: paymentChange, tables: payment };
export const composablePolicySpec: PolicyKindSpec = { kind: 'composable', changeOf: composableChange, tables: composable };
