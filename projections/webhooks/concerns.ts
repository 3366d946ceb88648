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
import type { PdaDeriver } from '../../src/domain/pda.js';
import type { TributaryEvent } from '../../src/events/envelope.js';

export type PolicyKind = 'payment' | 'composable';

export type Concern =
  | { kind: 'gateway'; gateway: string }
  | { kind: 'policy'; policyKind: PolicyKind; policy: string }
  | { kind: 'none' };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function concernOf(e: TributaryEvent, pda: PdaDeriver): Concern {
  const d = e.data;
  const named = (field: string): Concern => {
    const gateway = str(d[field]);
    return gateway ? { kind: 'gateway', gateway } : { kind: 'none' };
  };
  const policy = (policyKind: PolicyKind, field: string): Concern => {
    const address = str(d[field]);
    return address ? { kind: 'policy', policyKind, policy: address } : { kind: 'none' };
  };
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
      return named('gateway');
    case 'PaymentGatewayCreated': {
      const authority = str(d['authority']);
      return authority ? { kind: 'gateway', gateway: pda.gateway(authority) } : { kind: 'none' };
    }
    case 'PaymentPolicyStatusChanged':
    case 'PaymentPolicyDeleted':
      return policy('payment', 'payment_policy');
    case 'ComposablePolicyStatusChanged':
    case 'ComposablePolicyDeleted':
      return policy('composable', 'composable_policy');
    case 'UserPaymentCreated':
    case 'UserPaymentDeleted':
    case 'ProgramConfigCreated':
    case 'ProgramAuthorityChanged':
    case 'EmergencyPauseChanged':
      return { kind: 'none' };
    default: {
      const _unknown: never = e.name; // a name outside the catalog concerns no gateway we know
      return { kind: 'none' };
    }
  }
}

/** A policy creation's address and gateway, for the projection's policy → gateway map. */
export function createdPolicy(e: TributaryEvent, pda: PdaDeriver): { policy: string; gateway: string } | undefined {
  const d = e.data;
  const gateway = str(d['gateway']);
  if (!gateway) return undefined;
  if (e.name === 'ComposablePolicyCreated') {
    const policy = str(d['composable_policy']);
    return policy ? { policy, gateway } : undefined;
  }
  if (e.name === 'PaymentPolicyCreated') {
    // the event carries the user payment and the policy id, not the address: derive it
    const userPayment = str(d['user_payment']);
    const id = Number(d['policy_id']);
    if (!userPayment || !Number.isInteger(id)) return undefined;
    return { policy: pda.paymentPolicy(userPayment, id), gateway };
  }
  return undefined;
}
