/**
 * The event catalog: the IDL's canonical event names (generated into event-types.ts), and the short names of SPEC.md
 * accepted as aliases wherever a name is an input.
 */
import { idlEvents } from '../idl/index.js';
import { GENERATED_EVENT_NAMES } from './event-types.js';

export const EVENT_NAMES = GENERATED_EVENT_NAMES;

export type EventName = (typeof EVENT_NAMES)[number];

// The IDL is the source of truth; this guards the literal list above against drift.
{
  const fromIdl = idlEvents.map((e) => e.name).sort();
  if (fromIdl.join() !== [...EVENT_NAMES].sort().join()) {
    throw new Error('event catalog does not match the vendored IDL');
  }
}

/** SPEC.md's short names → canonical IDL names. */
export const EVENT_ALIASES: Readonly<Record<string, EventName>> = Object.freeze({
  PolicyCreated: 'PaymentPolicyCreated',
  PolicyDeleted: 'PaymentPolicyDeleted',
  PolicyStatusChanged: 'PaymentPolicyStatusChanged',
  GatewayCreated: 'PaymentGatewayCreated',
  GatewayDeleted: 'PaymentGatewayDeleted',
  ReferralRewardDistributed: 'ReferralRewardDistributedRecord',
});

const canonical = new Set<string>(EVENT_NAMES);

/** Resolves a canonical name or an alias (case-sensitive, as the IDL spells them); undefined if unknown. */
export function resolveEventName(input: string): EventName | undefined {
  if (canonical.has(input)) return input as EventName;
  return EVENT_ALIASES[input];
}

export function isEventName(input: string): input is EventName {
  return canonical.has(input);
}
