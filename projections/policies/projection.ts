/**
 * Payment policies of all five variants: parameters as the chain holds them (evolved by
 * every PaymentRecord with the program's own schedule rules), status and its history,
 * totals, last payment, next payment due, memo/trackingId, owner and mint of the user
 * payment. Each batch: load the touched rows, fold the events (pure), save the changes.
 * The composable policy model is the same machinery with another spec.
 */
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { Projection } from '../runner/projection.js';
import { foldPolicies, type PolicyKindSpec } from './fold.js';
import { paymentPolicySpec } from './specs.js';
import { addPolicyScopes, loadState, saveState } from './store.js';

export function createPolicyProjection(name: string, spec: PolicyKindSpec, pda: PdaDeriver): Projection {
  return {
    name,
    tables: [
      { name: spec.tables.owners, orderBy: 'user_payment' },
      { name: spec.tables.policies, orderBy: 'address' },
      { name: spec.tables.history, orderBy: 'policy, slot, event_id' },
    ],
    replayable: true,
    async apply(trx, events) {
      const addresses = new Set<string>();
      const userPayments = new Set<string>();
      for (const e of events) {
        const c = spec.changeOf(pda, e);
        if (c === undefined) continue;
        addresses.add(c.address);
        if (c.kind === 'created') userPayments.add(c.userPayment);
      }
      const hasOwners = events.some((e) => e.name === 'UserPaymentCreated');
      const scopes = new Set<string>();
      if (addresses.size === 0 && !hasOwners) return scopes;
      const state = await loadState(trx, spec, [...addresses], [...userPayments]);
      // the lists a row leaves, should the fold move it, as well as those it enters (saveState)
      for (const r of state.policies.values()) addPolicyScopes(scopes, r);
      const result = foldPolicies(spec, pda, state, events);
      await saveState(trx, spec, state, result, scopes);
      return scopes;
    },
  };
}

export function createPaymentPoliciesProjection(pda: PdaDeriver): Projection {
  return createPolicyProjection('payment-policies', paymentPolicySpec, pda);
}

export const paymentPoliciesProjection = createPaymentPoliciesProjection(createPdaDeriver(PROGRAM_ID));
