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
import { runBuiltin } from './builtins.js';
import {
  COMPUTE_BUDGET_PROGRAM_ID, COMPUTE_UNIT_LIMIT, EVENT_IX_TAG, OTHER_PROGRAM_ID, PROGRAM_ID, SYSTEM_PROGRAM_ID,
} from './constants.js';
import { keyString, pdas } from './keys.js';
import type { ProgramClock } from './program/context.js';
import { invokeTributary } from './program/dispatch.js';
import { createOverlay, type AccountView, type Overlay } from './program/store.js';
import { runtimeErrorText } from './token-program.js';

export type TransactionError =
  | { InstructionError: [number, { Custom: number } | string] }
  /** a Compute Budget instruction of a kind given earlier in the transaction */
  | { DuplicateInstruction: number }
  | string;

export interface CompiledInnerInstruction { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }
export interface InnerInstructions { index: number; instructions: CompiledInnerInstruction[] }

export interface ExecutedEvent { name: string; payload: Buffer; ixPath: string; index: number; observed?: Record<string, unknown> }

export interface ExecOptions {
  clock: ProgramClock;
  /** whether the n-th event (0-based, in emission order) goes out through a self-CPI */
  viaCpi?: (n: number) => boolean;
  /** the transaction's compute unit limit (its Compute Budget); default 200,000 per instruction */
  unitLimit?: number;
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
/** programs of the runtime itself: they log no `consumed` line (the noise program stands in for one) */
const NATIVE = new Set([SYSTEM_PROGRAM_ID.toBase58(), COMPUTE_BUDGET_PROGRAM_ID.toBase58(), NOISE]);

interface Pending { name: string; payload: Buffer; outer: number; inner?: number; observed?: Record<string, unknown> }

export function executeMessage(base: AccountView, message: VersionedMessage, opts: ExecOptions): ExecResult {
  const overlay = createOverlay(base);
  const keys = message.staticAccountKeys;
  const keyStrings = keys.map(keyString);
  const keyIndex = (k: string): number => keyStrings.indexOf(k);
  const logs: string[] = [];
  const inner: InnerInstructions[] = [];
  const pending: Pending[] = [];
  const limit = opts.unitLimit ?? COMPUTE_UNIT_LIMIT * message.compiledInstructions.length;
  let units = 0;
  let emitted = 0;
  const id = (i: number): string => keyStrings[i] ?? '';
  const eventAuthorityIdx = keyIndex(EVENT_AUTHORITY);
  const selfIdx = keyIndex(SELF);
  /**
   * Charges an instruction's units: the line a node logs at the instruction's end, or
   * undefined (and the runtime's lines) when they pass the limit.
   */
  const meter = (program: string, cost: number): string | undefined => {
    const left = limit - units;
    if (cost <= left) {
      units += cost;
      return `Program ${program} consumed ${cost} of ${left} compute units`;
    }
    logs.push(`Program ${program} consumed ${left} of ${left} compute units`, `Program ${program} failed: exceeded CUs meter at BPF instruction`);
    units = limit;
    return undefined;
  };

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
      const consumed = meter(program, cost);
      if (consumed === undefined) return failed(outer, 'ComputationalBudgetExceeded');
      if (outcome.error) {
        logs.push(consumed, `Program ${program} failed: ${outcome.error.runtimeText()}`);
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
        logs.push(`Program ${program} invoke [2]`, `Program ${program} consumed 1200 of ${limit - units - 1200} compute units`, `Program ${program} success`);
      }
      const noiseIdx = keyIndex(NOISE);
      if (noiseIdx >= 0 && outcome.events[0]) {
        // a program we CPI into logging data of its own; only Tributary's frames are events
        innerList.push({ programIdIndex: noiseIdx, accounts: [], data: bs58.encode(outcome.events[0].payload), stackHeight: 2 });
        logs.push(`Program ${NOISE} invoke [2]`, 'Program log: noise', `Program data: ${outcome.events[0].payload.toString('base64')}`, `Program ${NOISE} success`);
      }
      if (innerList.length > 0) inner.push({ index: outer, instructions: innerList });
      logs.push(consumed, `Program ${program} success`);
      continue;
    }
    const out = runBuiltin(overlay, program, metas, data, logs);
    if (!out) {
      logs.push(`Program ${program} failed: unsupported program id`);
      return failed(outer, 'UnsupportedProgramId');
    }
    if (NATIVE.has(program)) {
      units += Math.min(out.units, limit - units);
    } else {
      const consumed = meter(program, out.units);
      if (consumed === undefined) return failed(outer, 'ComputationalBudgetExceeded');
      logs.push(consumed);
    }
    if (out.error !== undefined) {
      logs.push(`Program ${program} failed: ${runtimeErrorText(out.error)}`);
      return failed(outer, out.error);
    }
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
