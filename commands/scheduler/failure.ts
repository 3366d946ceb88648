/**
 * What a failed execution means for the payment (issue 14, "Failures are classified"):
 *
 *   dropped    the chain says there is nothing to charge: not due, paused, completed,
 *              deleted, expired, or not by this signer (a milestone only its owner or
 *              recipient may release). The intent ends; nothing is retried. A policy read
 *              missing (PolicyNotFound) is deleted only once a read the confirmation window
 *              later says so too (chain.ts, unconfirmedAbsence): before, it is looked at
 *              again on the short retry, counted nowhere.
 *   past_due   the payer cannot pay: insufficient balance, no delegation or too little
 *              of it. Retried on the dunning schedule, then given up.
 *   transient  the chain did not answer or the transaction could not land (RPC errors,
 *              an expired blockhash). Retried within seconds.
 *   failed     any other refusal (a wrong signer, a missing account): retried like a
 *              transient error, and counted towards the cooldown.
 *   paused     the program's emergency pause (its admin's set_emergency_pause): the payer
 *              did nothing wrong. execute_payment refuses it with ConstraintRaw on the
 *              `config` account (a raw constraint without a named error), the creating
 *              instructions with ProgramPaused; both read as `ProgramPaused`. Tried again
 *              every few seconds, never counted towards the dunning schedule or the
 *              cooldown, never given up because of it.
 *
 * Program errors are read by name (infra/solana/rpc-error-class.ts): from Anchor's log line,
 * a `Name (6007)` text, or the custom code, the SPL token program's named `Token<Name>`.
 * Only the lists below give a name a class; every other name, Anchor's included, is `failed`.
 */
import { programErrorByName } from '../../src/kernel/domain/program-errors.js';
import { nameInText, nameOfTxError } from '../../infra/solana/rpc-error-class.js';
import type { Refusal } from '../../infra/solana/sender.js';

export { nameInText, nameOfTxError };

export type FailureClass = 'dropped' | 'past_due' | 'transient' | 'failed' | 'paused';

export interface Failure { class: FailureClass; code: string; reason: string }

// Unauthorized: a milestone whose release condition names the owner or the recipient as its
// only signer; the gateway's signer can never pay it, so retrying would only spend fees.
const DROPPED = new Set(['PaymentNotDue', 'PolicyPaused', 'InvalidPolicyStatusTransition', 'PolicyExpired', 'PolicyNotFound', 'PolicyCompleted', 'Unauthorized']);
const PAST_DUE = new Set(['InsufficientBalance', 'NoDelegateSet', 'InsufficientDelegatedAmount', 'TokenInsufficientFunds', 'TokenOwnerMismatch']);
const TRANSIENT = new Set(['rpc', 'BlockhashNotFound', 'timeout', 'AccountInUse']);

/** The code of the program's emergency pause, whichever way the program refused it. */
export const PROGRAM_PAUSED = 'ProgramPaused';
export const PROGRAM_PAUSED_REASON = 'the program is paused by its admin (emergency pause): charged once it is lifted';
/** How long a charge or an execution waits before the config is read again while the program is paused. */
export const PROGRAM_PAUSED_WAIT_MS = 5_000;

export function classOf(code: string): FailureClass {
  if (code === PROGRAM_PAUSED) return 'paused';
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

/** The program's emergency pause, from its config account's field (the settler and the scheduler read it before sending). */
export function programPaused(config: { data: Record<string, unknown> }): boolean {
  return config.data['emergency_pause'] === true;
}

/**
 * Whether a refusal named `code` is the program's emergency pause: ProgramPaused, or a raw
 * constraint on the config account (execute_payment's `!config.emergency_pause`), which
 * the node's message names (`..., account config`) and Anchor's log line too
 * (`AnchorError caused by account: config. Error Code: ConstraintRaw.`).
 */
export function isProgramPause(code: string, text: string): boolean {
  return code === PROGRAM_PAUSED || (code === 'ConstraintRaw' && /\baccount:? config\b/.test(text));
}

/** The class of a failed sendTransaction or confirmation, from what the node answered. */
export function failureOfRpcError(message: string, data: unknown): Failure {
  const d = data as { err?: unknown; logs?: unknown } | undefined;
  const logs = Array.isArray(d?.logs) ? d.logs.filter((l): l is string => typeof l === 'string') : [];
  const name = d?.err !== undefined && d.err !== null ? nameOfTxError(d.err, logs) : nameInText(message) ?? 'unknown';
  const code = name === 'unknown' ? (nameInText(message) ?? 'failed') : name;
  if (isProgramPause(code, [message, ...logs].join('\n'))) return failure(PROGRAM_PAUSED, `${PROGRAM_PAUSED_REASON} (${message})`);
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
  const text = `the transaction failed on chain: ${r.name} ${JSON.stringify(r.err)}`;
  if (isProgramPause(r.name, [r.message, ...r.logs].join('\n'))) return failure(PROGRAM_PAUSED, `${PROGRAM_PAUSED_REASON} (${text})`);
  return failure(r.name, text);
}

/**
 * A raw constraint failed on chain whose logs could not be read (sender.ts reads them for
 * it; a node that kept no history has none): the emergency pause when the config says the
 * program is paused now. Read after the failure, so a pause lifted meanwhile leaves it as it
 * was; with the logs, failureOnChain knows the account and needs no such guess.
 */
export function pauseOnChain(f: Failure, config: { data: Record<string, unknown> } | undefined): Failure {
  if (f.code !== 'ConstraintRaw' || !config || !programPaused(config)) return f;
  return failure(PROGRAM_PAUSED, `${PROGRAM_PAUSED_REASON} (${f.reason})`);
}
