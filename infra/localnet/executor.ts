/**
 * The runtime around the program: runs a transaction's instructions in order against an
 * overlay of the account store and writes the logs exactly as Solana frames them
 * (`Program <id> invoke [n]` … `Program <id> success|failed: …`).
 *
 * Events leave the program either as `Program data:` log lines (emit!) or, for the share
 * the workload picks, as a self-CPI whose instruction data is EVENT_IX_TAG ++ event
 * (emit_cpi!), recorded in meta.innerInstructions. Their identity follows the indexer's
 * rule: log events first (ixPath = top-level index, index = log order), then self-CPI
 * events in innerInstructions order (ixPath = `outer.inner`), the index continuing.
 */
import type { AccountMeta, VersionedMessage } from '@solana/web3.js';
import bs58 from 'bs58';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID, COMPUTE_BUDGET_PROGRAM_ID, COMPUTE_UNIT_LIMIT, EVENT_IX_TAG, OTHER_PROGRAM_ID, PROGRAM_ID,
  SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID,
} from './constants.js';
import { keyString, pdas } from './keys.js';
import type { ProgramClock } from './program/context.js';
import { invokeTributary } from './program/dispatch.js';
import { createOverlay, type AccountView, type Overlay } from './program/store.js';
import { runAssociatedTokenProgram, runTokenProgram, runtimeErrorText, TokenFailure } from './token-program.js';

export type TransactionError = { InstructionError: [number, { Custom: number } | string] } | string;

export interface CompiledInnerInstruction { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }
export interface InnerInstructions { index: number; instructions: CompiledInnerInstruction[] }

export interface ExecutedEvent { name: string; payload: Buffer; ixPath: string; index: number; observed?: Record<string, unknown> }

export interface ExecOptions {
  clock: ProgramClock;
  /** whether the n-th event (0-based, in emission order) goes out through a self-CPI */
  viaCpi?: (n: number) => boolean;
}

export interface ExecResult {
  err: TransactionError | null;
  logs: string[];
  innerInstructions: InnerInstructions[];
  /** events of a successful transaction with their identities; empty when it failed */
  events: ExecutedEvent[];
  unitsConsumed: number;
  overlay: Overlay;
}

const SELF = PROGRAM_ID.toBase58();
const EVENT_AUTHORITY = pdas.eventAuthority().toBase58();
const NOISE = OTHER_PROGRAM_ID.toBase58();

interface Pending { name: string; payload: Buffer; outer: number; inner?: number; observed?: Record<string, unknown> }

export function executeMessage(base: AccountView, message: VersionedMessage, opts: ExecOptions): ExecResult {
  const overlay = createOverlay(base);
  const keys = message.staticAccountKeys;
  const keyStrings = keys.map(keyString);
  const keyIndex = (k: string): number => keyStrings.indexOf(k);
  const logs: string[] = [];
  const inner: InnerInstructions[] = [];
  const pending: Pending[] = [];
  let units = 0;
  let emitted = 0;
  const id = (i: number): string => keyStrings[i] ?? '';
  const eventAuthorityIdx = keyIndex(EVENT_AUTHORITY);
  const selfIdx = keyIndex(SELF);

  for (const [outer, ix] of message.compiledInstructions.entries()) {
    const program = id(ix.programIdIndex);
    const metas: AccountMeta[] = ix.accountKeyIndexes.map((i) => ({
      pubkey: keys[i] ?? PROGRAM_ID, isSigner: message.isAccountSigner(i), isWritable: message.isAccountWritable(i),
    }));
    const data = Buffer.from(ix.data);
    logs.push(`Program ${program} invoke [1]`);
    if (program === SELF) {
      const outcome = invokeTributary(overlay, opts.clock, metas, data);
      logs.push(...outcome.logs);
      const cost = 4_000 + 1_500 * outcome.events.length + data.length * 10;
      units += cost;
      if (outcome.error) {
        logs.push(`Program ${program} consumed ${cost} of ${COMPUTE_UNIT_LIMIT - units + cost} compute units`);
        logs.push(`Program ${program} failed: ${outcome.error.runtimeText()}`);
        return failed(outer, outcome.error.runtimeError());
      }
      const innerList: CompiledInnerInstruction[] = [];
      for (const ev of outcome.events) {
        const cpi = eventAuthorityIdx >= 0 && selfIdx >= 0 && (opts.viaCpi?.(emitted) ?? false);
        emitted += 1;
        if (!cpi) {
          logs.push(`Program data: ${ev.payload.toString('base64')}`);
          pending.push({ ...ev, outer });
          continue;
        }
        pending.push({ ...ev, outer, inner: innerList.length });
        innerList.push({
          programIdIndex: selfIdx, accounts: [eventAuthorityIdx],
          data: bs58.encode(Buffer.concat([EVENT_IX_TAG, ev.payload])), stackHeight: 2,
        });
        logs.push(`Program ${program} invoke [2]`, `Program ${program} consumed 1200 of ${COMPUTE_UNIT_LIMIT - units - 1200} compute units`, `Program ${program} success`);
      }
      const noiseIdx = keyIndex(NOISE);
      if (noiseIdx >= 0 && outcome.events[0]) {
        // a program we CPI into logging data of its own; only Tributary's frames are events
        innerList.push({ programIdIndex: noiseIdx, accounts: [], data: bs58.encode(outcome.events[0].payload), stackHeight: 2 });
        logs.push(`Program ${NOISE} invoke [2]`, 'Program log: noise', `Program data: ${outcome.events[0].payload.toString('base64')}`, `Program ${NOISE} success`);
      }
      if (innerList.length > 0) inner.push({ index: outer, instructions: innerList });
      logs.push(`Program ${program} consumed ${cost} of ${COMPUTE_UNIT_LIMIT - units + cost} compute units`, `Program ${program} success`);
      continue;
    }
    const err = runBuiltin(overlay, program, metas, data, logs);
    units += 150;
    if (err) return failed(outer, err);
    logs.push(`Program ${program} success`);
  }
  return { err: null, logs, innerInstructions: inner, events: withIdentity(pending), unitsConsumed: units, overlay };

  function failed(outer: number, e: { Custom: number } | string): ExecResult {
    return { err: { InstructionError: [outer, e] }, logs, innerInstructions: inner, events: [], unitsConsumed: units, overlay };
  }
}

function withIdentity(pending: Pending[]): ExecutedEvent[] {
  const logged = pending.filter((p) => p.inner === undefined);
  const cpi = pending.filter((p) => p.inner !== undefined).sort((a, b) => a.outer - b.outer || (a.inner ?? 0) - (b.inner ?? 0));
  return [
    ...logged.map((p, index) => ({ name: p.name, payload: p.payload, ixPath: String(p.outer), index, ...(p.observed ? { observed: p.observed } : {}) })),
    ...cpi.map((p, i) => ({ name: p.name, payload: p.payload, ixPath: `${p.outer}.${p.inner}`, index: logged.length + i, ...(p.observed ? { observed: p.observed } : {}) })),
  ];
}

/** System transfers, compute-budget no-ops, and the noise program that logs `Program data:` at top level. */
function runBuiltin(view: Overlay, program: string, metas: AccountMeta[], data: Buffer, logs: string[]): { Custom: number } | string | undefined {
  if (program === COMPUTE_BUDGET_PROGRAM_ID.toBase58()) return undefined;
  if (program === TOKEN_PROGRAM_ID.toBase58() || program === ASSOCIATED_TOKEN_PROGRAM_ID.toBase58()) {
    try {
      if (program === TOKEN_PROGRAM_ID.toBase58()) runTokenProgram(view, metas, data, logs);
      else runAssociatedTokenProgram(view, metas, data, logs);
      logs.push(`Program ${program} consumed ${program === TOKEN_PROGRAM_ID.toBase58() ? 4_645 : 21_990} of ${COMPUTE_UNIT_LIMIT} compute units`);
      return undefined;
    } catch (err) {
      if (!(err instanceof TokenFailure)) throw err;
      if (err.logLine) logs.push(err.logLine);
      logs.push(`Program ${program} failed: ${runtimeErrorText(err.error)}`);
      return err.error;
    }
  }
  if (program === OTHER_PROGRAM_ID.toBase58()) {
    logs.push('Program log: Instruction: Noise', `Program data: ${data.toString('base64')}`);
    return undefined;
  }
  if (program !== SYSTEM_PROGRAM_ID.toBase58()) {
    logs.push(`Program ${program} failed: unsupported program id`);
    return 'UnsupportedProgramId';
  }
  if (data.length >= 12 && data.readUInt32LE(0) === 2) {
    const [from, to] = metas;
    const lamports = Number(data.readBigUInt64LE(4));
    const src = from && view.get(from.pubkey.toBase58());
    if (!from || !to || !from.isSigner) return 'MissingRequiredSignature';
    if (!src || src.lamports < lamports) {
      logs.push(`Transfer: insufficient lamports ${src?.lamports ?? 0}, need ${lamports}`);
      logs.push(`Program ${program} failed: custom program error: 0x1`);
      return { Custom: 1 };
    }
    const dst = view.get(to.pubkey.toBase58()) ?? { lamports: 0, owner: SYSTEM_PROGRAM_ID.toBase58(), executable: false, data: Buffer.alloc(0) };
    view.set(from.pubkey.toBase58(), { ...src, lamports: src.lamports - lamports });
    view.set(to.pubkey.toBase58(), { ...dst, lamports: dst.lamports + lamports });
  }
  return undefined;
}

