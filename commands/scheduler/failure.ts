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
 * Program errors are read by name: from Anchor's log line (`Error Code: Name.`), from a
 * `Name (6007)` text, or from the custom code of the transaction error, through the kernel's
 * table (the IDL's errors and Anchor's framework errors) and the SPL token program's errors
 * (named `Token<Name>` here, so that the payer's `InsufficientFunds` is not mistaken for one of ours).
 * Only the lists below give a name a class; every other name, Anchor's included, is `failed`.
 */
import { programErrorByCode, programErrorByName, SPL_TOKEN_ERRORS } from '../../src/kernel/domain/program-errors.js';

export type FailureClass = 'dropped' | 'past_due' | 'transient' | 'failed';

export interface Failure { class: FailureClass; code: string; reason: string }

// Unauthorized: a milestone whose release condition names the owner or the recipient as its
// only signer; the gateway's signer can never pay it, so retrying would only spend fees.
const DROPPED = new Set(['PaymentNotDue', 'PolicyPaused', 'InvalidPolicyStatusTransition', 'PolicyExpired', 'PolicyNotFound', 'PolicyCompleted', 'Unauthorized']);
const PAST_DUE = new Set(['InsufficientBalance', 'NoDelegateSet', 'InsufficientDelegatedAmount', 'TokenInsufficientFunds', 'TokenOwnerMismatch']);
const TRANSIENT = new Set(['rpc', 'BlockhashNotFound', 'timeout', 'AccountInUse']);

/** The token program's error numbers (all under 100, below any of the program's own) by the name used here. */
const TOKEN_ERRORS = new Map<number, string>(Object.entries(SPL_TOKEN_ERRORS).map(([name, e]) => [e.code, `Token${name}`]));

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

interface TxErrorShape { InstructionError?: [number, unknown] }

/** The error's name from a transaction error object (`{InstructionError: [i, {Custom: n}]}` or a string). */
export function nameOfTxError(err: unknown, logs: readonly string[] = []): string {
  const fromLogs = nameInText(logs.join('\n'));
  if (fromLogs) return fromLogs;
  if (typeof err === 'string') return err;
  const ie = (err as TxErrorShape | null)?.InstructionError;
  if (Array.isArray(ie)) {
    const detail = ie[1];
    if (typeof detail === 'string') return detail;
    const custom = (detail as { Custom?: unknown } | null)?.Custom;
    if (typeof custom === 'number') return programErrorByCode(custom)?.name ?? TOKEN_ERRORS.get(custom) ?? `Custom${custom}`;
  }
  return 'unknown';
}

/** A program error named in free text: Anchor's `Error Code: X.` or `X (60nn)`. */
export function nameInText(text: string): string | undefined {
  const anchor = /Error Code: (\w+)\./.exec(text);
  if (anchor?.[1]) return anchor[1];
  // the first `Name (code)` that is one of the program's errors: a token error's `InsufficientFunds (1)` may come before it
  for (const m of text.matchAll(/\b([A-Z][A-Za-z]+) \((\d+)\)/g)) {
    if (m[1] && programErrorByCode(Number(m[2]))?.name === m[1]) return m[1];
  }
  const hex = /custom program error: 0x([0-9a-f]+)/i.exec(text);
  // without logs a small number may be any program's; 0x1 alone is read as the payer's empty token account
  if (hex?.[1]) return programErrorByCode(parseInt(hex[1], 16))?.name ?? (parseInt(hex[1], 16) === 1 ? 'TokenInsufficientFunds' : undefined);
  if (/Blockhash not found/i.test(text)) return 'BlockhashNotFound';
  return undefined;
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
