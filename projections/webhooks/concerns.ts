/**
 * Which gateway an event concerns, as a pure function of the event.
 *
 * - An event that names the gateway account (`gateway`: payments, referral rewards,
 *   composable executions, policy creations, every gateway change and deletion) concerns
 *   that gateway.
 * - PaymentGatewayCreated names only the authority: its gateway is PDA("gateway", authority).
 * - Events that name only a policy (PaymentPolicyStatusChanged, PaymentPolicyDeleted and
 *   their composable twins) concern the gateway of that policy. The webhooks projection
 *   keeps its own map policy → gateway from the policy creations it sees (the policies read
 *   model is written by another consumer group and may be behind), and falls back to the
 *   policies read models only for policies created before the projection existed.
 * - User payment and program events (UserPaymentCreated/Deleted, ProgramConfigCreated,
 *   ProgramAuthorityChanged, EmergencyPauseChanged) concern no single gateway: a user
 *   payment account serves every gateway, and program events concern all of them. They are
 *   not delivered by webhooks.
 */
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';

export type PolicyKind = 'payment' | 'composable';

export type Concern =
  | { kind: 'gateway'; gateway: string }
  | { kind: 'policy'; policyKind: PolicyKind; policy: string }
  | { kind: 'none' };

const str = (v: string): string | undefined => (v !== '' ? v : undefined);

const named = (gateway: string): Concern => (str(gateway) ? { kind: 'gateway', gateway } : { kind: 'none' });
const policy = (policyKind: PolicyKind, address: string): Concern => (str(address) ? { kind: 'policy', policyKind, policy: address } : { kind: 'none' });

export function concernOf(e: TributaryEvent, pda: PdaDeriver): Concern {
  switch (e.name) {
    case 'PaymentRecord':
    case 'ReferralRewardDistributedRecord':
    case 'ComposableExecuted':
    case 'PaymentPolicyCreated':
    case 'ComposablePolicyCreated':
    case 'PaymentGatewayDeleted':
    case 'GatewayFeeBpsChanged':
    case 'GatewayFeeRecipientChanged':
    case 'GatewaySignerChanged':
      return named(e.data.gateway);
    case 'PaymentGatewayCreated':
      return str(e.data.authority) ? { kind: 'gateway', gateway: pda.gateway(e.data.authority) } : { kind: 'none' };
    case 'PaymentPolicyStatusChanged':
    case 'PaymentPolicyDeleted':
      return policy('payment', e.data.payment_policy);
    case 'ComposablePolicyStatusChanged':
    case 'ComposablePolicyDeleted':
      return policy('composable', e.data.composable_policy);
    case 'UserPaymentCreated':
    case 'UserPaymentDeleted':
    case 'ProgramConfigCreated':
    case 'ProgramAuthorityChanged':
    case 'EmergencyPauseChanged':
      return { kind: 'none' };
    default:
      return assertNever(e);
  }
}

/** A policy creation's address and gateway, for the projection's policy → gateway map. */
export function createdPolicy(e: TributaryEvent, pda: PdaDeriver): { policy: string; gateway: string } | undefined {
  if (e.name === 'ComposablePolicyCreated') {
    const { gateway, composable_policy: policy } = e.data;
    return str(gateway) && str(policy) ? { policy, gateway } : undefined;
  }
  if (e.name === 'PaymentPolicyCreated') {
    // the event carries the user payment and the policy id, not the address: derive it
    const { gateway, user_payment: userPayment, policy_id: id } = e.data;
    if (!str(gateway) || !str(userPayment)) return undefined;
    return { policy: pda.paymentPolicy(userPayment, id), gateway };
  }
  return undefined;
}
