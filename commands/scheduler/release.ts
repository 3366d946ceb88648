/**
 * Which scheduled payments the gateway's signer may make, as the program decides it
 * (shared/schedule.rs, validate_policy_execution): a Milestone's release_condition names
 * at most one signer, bit 1 the gateway's signer, bit 2 the payer (owner), bit 3 the
 * recipient; the program refuses any other caller (Unauthorized). A milestone meant to be
 * released by its owner or recipient is theirs to release by hand: the scheduler never
 * pulls it. Bit 0 (release on the due date) does not name a signer; the scheduler pays a
 * milestone at its timestamp either way.
 */
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';

export const RELEASE_OWNER = 0b0100;
export const RELEASE_RECIPIENT = 0b1000;
/** the signer bits that exclude the gateway's signer */
export const NOT_GATEWAY = RELEASE_OWNER | RELEASE_RECIPIENT;

export function gatewayMayRelease(type: PolicyType): boolean {
  return type.kind !== 'Milestone' || (type.release_condition & NOT_GATEWAY) === 0;
}
