/**
 * What a node's answer to sendTransaction means, by JSON-RPC code first and message
 * second. Only a preflight refusal that carries a program error (the simulation's
 * `err` an InstructionError) is the payer's or the program's "no": every other answer
 * (a node behind, a rate limit, an unknown code) says nothing of whether the bytes, sent
 * now or before, reach a leader. Those leave a transaction in doubt, resolved from the
 * chain's own state (sender.ts, resolveInDoubt).
 *
 * Program errors are named from Anchor's log line (`Error Code: Name.`), from a
 * `Name (6007)` text, or from the custom code, through the kernel's table; the SPL token
 * program's are named `Token<Name>`, so that the payer's `InsufficientFunds` is not
 * mistaken for one of ours.
 */
import { programErrorByCode, SPL_TOKEN_ERRORS } from '../../src/kernel/domain/program-errors.js';
import { RpcResponseError, RpcUnavailableError } from './rpc-client.js';

export type RpcErrorKind =
  /** preflight ran the program and it refused: nothing landed by this send */
  | 'program_refusal'
  /** the signature is in the node's status cache: it landed (or failed) before */
  | 'already_processed'
  /** the node no longer (or not yet) knows the blockhash: these bytes cannot land by this send */
  | 'blockhash_not_found'
  /** a transaction-level preflight refusal (signature, fee payer's lamports): not the program's */
  | 'rejected'
  /** -32005 and kin: the node is behind or unhealthy; it may still have forwarded the bytes */
  | 'node_unhealthy'
  | 'rate_limited'
  /** no answer at all: a timeout, a network failure, a 5xx */
  | 'no_answer'
  | 'unknown';

export interface RpcErrorClass {
  kind: RpcErrorKind;
  /** the node's message, program errors named */
  message: string;
  /** program_refusal: the error's name (`InsufficientBalance`, `TokenInsufficientFunds`, `Custom6042`) */
  name?: string;
  /** program_refusal: the simulation's transaction error and logs */
  err?: unknown;
  logs?: readonly string[];
}

/** JSON-RPC codes of a node that cannot serve now: unhealthy or behind, a slot not reached or not available yet. */
const NODE_UNHEALTHY = new Set([-32005, -32004, -32014, -32016]);
/** The codes providers use for "too many requests" (HTTP 429 arrives as a status, not a code). */
const RATE_LIMITED = new Set([-32429, 429]);
const PREFLIGHT_FAILURE = -32002;

/** The token program's error numbers (all under 100, below any of the program's own) by the name used here. */
const TOKEN_ERRORS = new Map<number, string>(Object.entries(SPL_TOKEN_ERRORS).map(([name, e]) => [e.code, `Token${name}`]));

export function classifyRpcError(err: RpcResponseError | RpcUnavailableError): RpcErrorClass {
  if (err instanceof RpcUnavailableError) {
    const limited = err.httpStatus === 429 || /too many requests|rate.?limit/i.test(err.message);
    return { kind: limited ? 'rate_limited' : 'no_answer', message: err.message };
  }
  const message = err.message;
  const sim = err.data as { err?: unknown; logs?: unknown } | undefined | null;
  const simErr = sim?.err ?? null;
  if (err.code === PREFLIGHT_FAILURE && simErr !== null) {
    if (simErr === 'BlockhashNotFound') return { kind: 'blockhash_not_found', message };
    if (simErr === 'AlreadyProcessed') return { kind: 'already_processed', message };
    const logs = Array.isArray(sim?.logs) ? sim.logs.filter((l): l is string => typeof l === 'string') : [];
    if (isInstructionError(simErr)) return { kind: 'program_refusal', message, name: nameOfTxError(simErr, logs), err: simErr, logs };
    return { kind: 'rejected', message };
  }
  if (NODE_UNHEALTHY.has(err.code)) return { kind: 'node_unhealthy', message };
  if (RATE_LIMITED.has(err.code) || /too many requests|rate.?limit/i.test(message)) return { kind: 'rate_limited', message };
  if (/already been processed/i.test(message)) return { kind: 'already_processed', message };
  if (/blockhash not found/i.test(message)) return { kind: 'blockhash_not_found', message };
  if (err.code === -32003) return { kind: 'rejected', message };
  return { kind: 'unknown', message };
}

function isInstructionError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && Array.isArray((err as { InstructionError?: unknown }).InstructionError);
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
