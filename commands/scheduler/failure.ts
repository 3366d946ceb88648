/**
 * What a failed execution means for the payment (issue 14, "Failures are classified"):
 *
 *   dropped    the chain says there is nothing to charge: not due, paused, completed,
 *              deleted, expired, or not by this signer (a milestone only its owner or
 *              recipient may release). The intent ends; nothing is retried.
 *   past_due   the payer cannot pay: insufficient balance, no delegation or too little
 *              of it. Retried on the dunning schedule, then given up.
 *   transient  the chain did not answer or the transaction could not land (RPC errors,
 *              an expired blockhash). Retried within seconds.
 *   failed     any other refusal (a wrong signer, a missing account): retried like a
 *              transient error, and counted towards the cooldown.
 *
 * Program errors are read by name (infra/solana/rpc-error-class.ts): from Anchor's log line,
 * a `Name (6007)` text, or the custom code, the SPL token program's named `Token<Name>`.
 * Only the lists below give a name a class; every other name, Anchor's included, is `failed`.
 */
import { programErrorByName } from '../../src/kernel/domain/program-errors.js';
import { nameInText, nameOfTxError } from '../../infra/solana/rpc-error-class.js';
import type { Refusal } from '../../infra/solana/sender.js';

export { nameInText, nameOfTxError };

export type FailureClass = 'dropped' | 'past_due' | 'transient' | 'failed';

export interface Failure { class: FailureClass; code: string; reason: string }

// Unauthorized: a milestone whose release condition names the owner or the recipient as its
// only signer; the gateway's signer can never pay it, so retrying would only spend fees.
const DROPPED = new Set(['PaymentNotDue', 'PolicyPaused', 'InvalidPolicyStatusTransition', 'PolicyExpired', 'PolicyNotFound', 'PolicyCompleted', 'Unauthorized']);
const PAST_DUE = new Set(['InsufficientBalance', 'NoDelegateSet', 'InsufficientDelegatedAmount', 'TokenInsufficientFunds', 'TokenOwnerMismatch']);
const TRANSIENT = new Set(['rpc', 'BlockhashNotFound', 'timeout', 'AccountInUse']);

export function classOf(code: string): FailureClass {
  if (DROPPED.has(code)) return 'dropped';
  if (PAST_DUE.has(code)) return 'past_due';
  if (TRANSIENT.has(code)) return 'transient';
  return 'failed';
}

export function failure(code: string, reason: string): Failure {
  return { class: classOf(code), code, reason };
}

/** `InsufficientBalance (6007)`, as a user should read a program error. */
export function programErrorText(name: string): string {
  const named = programErrorByName(name);
  return named ? `${name} (${named.code})` : name;
}

/** The class of a failed sendTransaction or confirmation, from what the node answered. */
export function failureOfRpcError(message: string, data: unknown): Failure {
  const d = data as { err?: unknown; logs?: unknown } | undefined;
  const logs = Array.isArray(d?.logs) ? d.logs.filter((l): l is string => typeof l === 'string') : [];
  const name = d?.err !== undefined && d.err !== null ? nameOfTxError(d.err, logs) : nameInText(message) ?? 'unknown';
  const code = name === 'unknown' ? (nameInText(message) ?? 'failed') : name;
  return failure(code, describe(code, message));
}

/** The message led by the error's name and number, unless it names them already (the localnet's messages do). */
function describe(code: string, message: string): string {
  const text = programErrorText(code);
  return text === code || message.includes(text) ? message : `${text}: ${message}`;
}

/** A program's refusal at preflight: its class by name. */
export function failureOfRefusal(r: Refusal): Failure {
  return failureOfRpcError(r.message, { err: r.err, logs: r.logs });
}

/** A signature that failed on chain. */
export function failureOnChain(r: Refusal): Failure {
  return failure(r.name, `the transaction failed on chain: ${r.name} ${JSON.stringify(r.err)}`);
}
