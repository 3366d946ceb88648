/**
 * What a batch of the merchant model touches, read off its events before the fold: the
 * rows store.ts loads so that the fold sees every policy, user payment, gateway and
 * running MRR it may change (an MRR it moves without having loaded is a bug: fold.ts).
 */
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';

export const pairKey = (gateway: string, mint: string): string => `${gateway}|${mint}`;
export const subscriberKey = (gateway: string, mint: string, payer: string): string => `${gateway}|${mint}|${payer}`;

export interface BatchNeeds {
  policies: Set<string>;
  userPayments: Set<string>;
  gateways: Set<string>;
  /** gateway and mint pairs whose MRR payments may move */
  pairs: Map<string, [string, string]>;
  /** gateway and user payment of each creation: its mint's MRR moves */
  creations: [string, string][];
  /** user payments created in the batch itself, with their mints */
  batchMints: Map<string, string>;
  /** the mints payments name for each policy paid (a policy whose user payment is unknown takes it) */
  paidMints: Map<string, Set<string>>;
}

/** What a batch needs loaded: policies, user payments, gateways and MRR pairs. */
export function batchNeeds(pda: PdaDeriver, events: readonly TributaryEvent[]): BatchNeeds {
  const n: BatchNeeds = {
    policies: new Set(), userPayments: new Set(), gateways: new Set(), pairs: new Map(), creations: [], batchMints: new Map(), paidMints: new Map(),
  };
  for (const e of events) {
    switch (e.name) {
      case 'UserPaymentCreated':
        n.batchMints.set(pda.userPayment(e.data.owner, e.data.token_mint), e.data.token_mint);
        break;
      case 'PaymentPolicyCreated':
        n.policies.add(pda.paymentPolicy(e.data.user_payment, e.data.policy_id));
        n.userPayments.add(e.data.user_payment);
        n.creations.push([e.data.gateway, e.data.user_payment]);
        break;
      case 'PaymentPolicyStatusChanged': case 'PaymentPolicyDeleted':
        n.policies.add(e.data.payment_policy);
        break;
      case 'PaymentRecord': {
        const { payment_policy: policy, gateway, token_mint: mint } = e.data;
        n.policies.add(policy);
        n.gateways.add(gateway);
        n.pairs.set(pairKey(gateway, mint), [gateway, mint]);
        n.paidMints.set(policy, (n.paidMints.get(policy) ?? new Set()).add(mint));
        break;
      }
      case 'GatewayFeeBpsChanged':
        n.gateways.add(e.data.gateway);
        break;
      case 'ComposableExecuted': case 'ComposablePolicyCreated': case 'ComposablePolicyDeleted': case 'ComposablePolicyStatusChanged':
      case 'EmergencyPauseChanged': case 'GatewayFeeRecipientChanged': case 'GatewaySignerChanged': case 'PaymentGatewayCreated':
      case 'PaymentGatewayDeleted': case 'ProgramAuthorityChanged': case 'ProgramConfigCreated': case 'ReferralRewardDistributedRecord':
      case 'UserPaymentDeleted':
        break;
      default:
        assertNever(e);
    }
  }
  return n;
}
