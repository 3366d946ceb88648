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
 * `Name (6007)` text, or from the custom code of the transaction error through the IDL.
 */
import { idl } from '../../src/kernel/idl/index.js';

export type FailureClass = 'dropped' | 'past_due' | 'transient' | 'failed';

export interface Failure { class: FailureClass; code: string; reason: string }

// Unauthorized: a milestone whose release condition names the owner or the recipient as its
// only signer; the gateway's signer can never pay it, so retrying would only spend fees.
const DROPPED = new Set(['PaymentNotDue', 'PolicyPaused', 'InvalidPolicyStatusTransition', 'PolicyExpired', 'PolicyNotFound', 'PolicyCompleted', 'Unauthorized']);
const PAST_DUE = new Set(['InsufficientBalance', 'NoDelegateSet', 'InsufficientDelegatedAmount', 'TokenInsufficientFunds', 'TokenOwnerMismatch']);
const TRANSIENT = new Set(['rpc', 'BlockhashNotFound', 'timeout', 'AccountInUse']);

const ERROR_NAMES = new Map<number, string>(
  ((idl as unknown as { errors?: { code: number; name: string }[] }).errors ?? []).map((e) => [e.code, e.name]),
);
const ERROR_CODES = new Map<string, number>([...ERROR_NAMES].map(([code, name]) => [name, code]));

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
  const code = ERROR_CODES.get(name);
  return code === undefined ? name : `${name} (${code})`;
}

/** The SPL token program's own errors that mean the payer cannot pay (0x1 insufficient funds, 0x4 owner mismatch). */
const TOKEN_ERRORS: Readonly<Record<number, string>> = { 1: 'TokenInsufficientFunds', 4: 'TokenOwnerMismatch' };

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
    if (typeof custom === 'number') {
      const byIdl = ERROR_NAMES.get(custom);
      if (byIdl) return byIdl;
      const token = TOKEN_ERRORS[custom];
      if (token && logs.some((l) => /Tokenkeg/.test(l))) return token;
      if (custom < 100 && token) return token;
      return `Custom${custom}`;
    }
  }
  return 'unknown';
}

/** A program error named in free text: Anchor's `Error Code: X.` or `X (60nn)`. */
export function nameInText(text: string): string | undefined {
  const anchor = /Error Code: (\w+)\./.exec(text);
  if (anchor?.[1]) return anchor[1];
  const named = /\b([A-Z][A-Za-z]+) \((\d{4})\)/.exec(text);
  if (named?.[1] && ERROR_NAMES.get(Number(named[2])) === named[1]) return named[1];
  const hex = /custom program error: 0x([0-9a-f]+)/i.exec(text);
  if (hex?.[1]) return ERROR_NAMES.get(parseInt(hex[1], 16)) ?? (parseInt(hex[1], 16) === 1 ? 'TokenInsufficientFunds' : undefined);
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

function describe(code: string, message: string): string {
  return ERROR_CODES.has(code) ? `${programErrorText(code)}: ${message}` : message;
}
