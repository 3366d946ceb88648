/**
 * Composable policies: the policy read model's machinery (../policies) with 32-byte
 * memos, ComposableExecuted as the execution (total input, total output after fees), and
 * the forward config and validations kept for the normalized object.
 */
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { Projection } from '../runner/projection.js';
import { composablePolicySpec } from '../policies/specs.js';
import { createPolicyProjection } from '../policies/projection.js';

export function createComposablePoliciesProjection(pda: PdaDeriver): Projection {
  return createPolicyProjection('composable-policies', composablePolicySpec, pda);
}

export const composablePoliciesProjection = createComposablePoliciesProjection(createPdaDeriver(PROGRAM_ID));
