/**
 * From one fetched transaction to its Tributary events, with their stable identities.
 *
 * Two ways an Anchor program emits an event:
 *   - emit!: a `Program data: <base64>` log line. Only lines logged while our program is
 *     the innermost running invocation count: the log stack is rebuilt from the
 *     runtime's `invoke [n]` / `success` / `failed` lines, so data logged by programs we
 *     call, or by unrelated programs in the same transaction, is ignored.
 *   - emit_cpi!: an inner instruction to our program whose data is EVENT_IX_TAG followed
 *     by the event (discriminator ++ borsh).
 * Identity (shared with the localnet): log events first, ixPath = index of the top-level
 * instruction, index = position among our `Program data:` lines; then self-CPI events in
 * innerInstructions order, ixPath = `outer.inner`, the index continuing. Undecodable
 * payloads still take their index, so a future event type never shifts the others.
 *
 * What the chain reports besides events: execute_payment logs its fee split right after
 * PaymentRecord (`Program log: Payment executed: R -> recipient, G gateway fee, S
 * scheduler cut, P protocol fee`). Within one top-level instruction the n-th such line
 * of our program belongs to its n-th PaymentRecord; the split is attached to the event's
 * data as `fee_split` when the counts agree (`transfer` emits PaymentRecord and logs no
 * split), so the read models learn net or gross mode and the protocol cut from the chain.
 */
import bs58 from 'bs58';
import { decodeEventPayload } from '../../src/kernel/events/codec.js';
import { eventId, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { FeeSplit } from '../../src/kernel/events/event-types.js';
import type { TransactionJson } from '../solana/chain-reader.js';

/** sha256("anchor:event")[..8] */
export const EVENT_IX_TAG = Buffer.from([0xe4, 0x45, 0xa5, 0x2e, 0x51, 0xcb, 0x9a, 0x1d]);

export interface DecodedTransaction {
  events: TributaryEvent[];
  /** payloads of our program that matched no IDL event */
  unknown: { ixPath: string; index: number; payload: string }[];
  /** the transaction failed: its logs are not events */
  failed: boolean;
  /** the runtime cut the logs short; events after the cut are lost to the log path */
  truncated: boolean;
}

const INVOKE = /^Program (\S+) invoke \[(\d+)\]$/;
const EXIT = /^Program (\S+) (?:success$|failed)/;
const DATA = 'Program data: ';
/** execute_payment's split (the scheduler part is missing from older program versions) */
const SPLIT = /^Program log: Payment executed: (\d+) -> recipient, (\d+) gateway fee, (?:(\d+) scheduler cut, )?(\d+) protocol fee$/;

interface Payload { ixPath: string; payload: string }

interface LoggedSplit { topLevel: number; split: FeeSplit }

function logPayloads(logs: readonly string[], programId: string): { payloads: Payload[]; splits: LoggedSplit[]; truncated: boolean } {
  const stack: string[] = [];
  const payloads: Payload[] = [];
  const splits: LoggedSplit[] = [];
  let topLevel = -1;
  let truncated = false;
  for (const line of logs) {
    const invoke = INVOKE.exec(line);
    if (invoke) {
      if (invoke[2] === '1') {
        topLevel += 1;
        stack.length = 0;
      }
      stack.push(invoke[1] ?? '');
      continue;
    }
    if (EXIT.test(line)) {
      stack.pop();
      continue;
    }
    if (line.startsWith(DATA)) {
      if (stack.length > 0 && stack[stack.length - 1] === programId) {
        payloads.push({ ixPath: String(topLevel), payload: line.slice(DATA.length) });
      }
      continue;
    }
    const split = SPLIT.exec(line);
    if (split && stack.length > 0 && stack[stack.length - 1] === programId) {
      splits.push({ topLevel, split: { recipient_amount: split[1]!, gateway_residual: split[2]!, scheduler_cut: split[3] ?? '0', protocol_cut: split[4]! } });
      continue;
    }
    if (line === 'Log truncated') truncated = true;
  }
  return { payloads, splits, truncated };
}

/** Attaches each top-level instruction's logged splits to its PaymentRecords, in order, when the counts agree. */
function attachSplits(events: TributaryEvent[], splits: readonly LoggedSplit[]): void {
  const records = new Map<number, TributaryEvent<'PaymentRecord'>[]>();
  for (const e of events) {
    if (e.name !== 'PaymentRecord') continue;
    const top = Number(e.ixPath.split('.')[0]);
    records.set(top, [...(records.get(top) ?? []), e]);
  }
  const logged = new Map<number, FeeSplit[]>();
  for (const s of splits) logged.set(s.topLevel, [...(logged.get(s.topLevel) ?? []), s.split]);
  for (const [top, list] of records) {
    const found = logged.get(top) ?? [];
    if (found.length !== list.length) continue;
    list.forEach((e, i) => { e.data = { ...e.data, fee_split: found[i]! }; });
  }
}

function cpiPayloads(tx: TransactionJson, programId: string): Payload[] {
  const meta = tx.meta;
  const keys = [
    ...tx.transaction.message.accountKeys,
    ...(meta?.loadedAddresses?.writable ?? []),
    ...(meta?.loadedAddresses?.readonly ?? []),
  ];
  const groups = [...(meta?.innerInstructions ?? [])].sort((a, b) => a.index - b.index);
  const out: Payload[] = [];
  for (const group of groups) {
    group.instructions.forEach((ix, j) => {
      if (keys[ix.programIdIndex] !== programId) return;
      let data: Uint8Array;
      try {
        data = bs58.decode(ix.data);
      } catch {
        return;
      }
      if (data.length < 16 || !EVENT_IX_TAG.equals(Buffer.from(data.subarray(0, 8)))) return;
      out.push({ ixPath: `${group.index}.${j}`, payload: Buffer.from(data.subarray(8)).toString('base64') });
    });
  }
  return out;
}

export function decodeTransaction(tx: TransactionJson, signature: string, programId: string): DecodedTransaction {
  const meta = tx.meta;
  if (!meta || (meta.err !== null && meta.err !== undefined)) return { events: [], unknown: [], failed: true, truncated: false };
  const { payloads, splits, truncated } = logPayloads(meta.logMessages ?? [], programId);
  const all = [...payloads, ...cpiPayloads(tx, programId)];
  const events: TributaryEvent[] = [];
  const unknown: DecodedTransaction['unknown'] = [];
  all.forEach((p, index) => {
    const decoded = decodeEventPayload(p.payload);
    if (!decoded) {
      unknown.push({ ixPath: p.ixPath, index, payload: p.payload });
      return;
    }
    events.push({
      id: eventId(signature, p.ixPath, index), signature, slot: tx.slot,
      blockTime: tx.blockTime ?? null, ixPath: p.ixPath, index, ...decoded,
    });
  });
  attachSplits(events, splits);
  return { events, unknown, failed: false, truncated };
}
