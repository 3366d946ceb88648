/**
 * From one fetched transaction to its Tributary events, with their stable identities.
 *
 * Two ways an Anchor program emits an event:
 *   - emit!: a `Program data: <base64>` log line. Only lines logged while our program is
 *     the innermost running invocation count: the log stack is rebuilt from the
 *     runtime's own `invoke [n]` / `success` / `failed` lines (logs.ts), so data logged
 *     by programs we call, or by unrelated programs in the same transaction, is ignored.
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
import { decodeBase58, isBase58 } from '../../src/kernel/events/base58.js';
import { writeEventMembers } from '../../src/kernel/events/borsh-json-writer.js';
import { isEventName } from '../../src/kernel/events/catalog.js';
import { decodeEventBytes } from '../../src/kernel/events/codec.js';
import { eventId, type DecodedEvent, type SerializedEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { FeeSplit } from '../../src/kernel/events/event-types.js';
import type { TransactionJson } from '../solana/chain-reader.js';
import { readProgramLogs, type LoggedSplit } from './logs.js';

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

/** One event's bytes: from `start` in `bytes` (discriminator first). */
interface Payload { ixPath: string; bytes: Buffer; start: number }

/**
 * The logged split of each of a transaction's PaymentRecords (by position in `records`),
 * per top-level instruction, where that instruction logged as many splits as it has records.
 */
function splitsOf(records: readonly { ixPath: string }[], splits: readonly LoggedSplit[]): Map<number, FeeSplit> {
  const byTop = new Map<number, number[]>();
  records.forEach((e, i) => {
    const top = Number(e.ixPath.split('.')[0]);
    byTop.set(top, [...(byTop.get(top) ?? []), i]);
  });
  const logged = new Map<number, FeeSplit[]>();
  for (const s of splits) logged.set(s.topLevel, [...(logged.get(s.topLevel) ?? []), s.split]);
  const out = new Map<number, FeeSplit>();
  for (const [top, list] of byTop) {
    const found = logged.get(top) ?? [];
    if (found.length === list.length) list.forEach((at, i) => out.set(at, found[i]!));
  }
  return out;
}

/** The tag's bytes at the start of `data`: a byte loop, as a Buffer.compare call per instruction costs more. */
function taggedEvent(data: Buffer): boolean {
  if (data.length < 16) return false;
  for (let i = 0; i < 8; i += 1) if (data[i] !== EVENT_IX_TAG[i]) return false;
  return true;
}

/** The account at `i` of the transaction's keys, then of the addresses it loaded (writable first). */
function keyAt(keys: readonly string[], loaded: { writable: string[]; readonly: string[] } | null | undefined, i: number): string | undefined {
  if (i < keys.length) return keys[i];
  const w = loaded?.writable ?? [];
  return i - keys.length < w.length ? w[i - keys.length] : loaded?.readonly[i - keys.length - w.length];
}

function cpiPayloads(tx: TransactionJson, programId: string): Payload[] {
  const meta = tx.meta;
  const inner = meta?.innerInstructions;
  if (!inner || inner.length === 0) return [];
  const keys = tx.transaction.message.accountKeys;
  const loaded = meta.loadedAddresses;
  // the node lists the groups by outer index already; a copy is sorted only when it does not
  let ordered = true;
  for (let g = 1; g < inner.length && ordered; g += 1) ordered = inner[g - 1]!.index <= inner[g]!.index;
  const groups = ordered ? inner : [...inner].sort((a, b) => a.index - b.index);
  const out: Payload[] = [];
  for (const group of groups) {
    const ixs = group.instructions;
    for (let j = 0; j < ixs.length; j += 1) {
      const ix = ixs[j]!;
      if (keyAt(keys, loaded, ix.programIdIndex) !== programId) continue;
      const data = decodeBase58(ix.data);
      if (data && taggedEvent(data)) out.push({ ixPath: `${group.index}.${j}`, bytes: data, start: 8 });
    }
  }
  return out;
}

/** Our program's event payloads of a successful transaction, in identity order; undefined for a failed one. */
function payloadsOf(tx: TransactionJson, programId: string): { all: Payload[]; splits: LoggedSplit[]; truncated: boolean } | undefined {
  const meta = tx.meta;
  if (!meta || (meta.err !== null && meta.err !== undefined)) return undefined;
  const { payloads, splits, truncated } = readProgramLogs(meta.logMessages ?? [], programId);
  const all: Payload[] = payloads.map((p) => ({ ixPath: p.ixPath, bytes: Buffer.from(p.payload, 'base64'), start: 0 }));
  for (const p of cpiPayloads(tx, programId)) all.push(p);
  return { all, splits, truncated };
}

export function decodeTransaction(tx: TransactionJson, signature: string, programId: string): DecodedTransaction {
  const read = payloadsOf(tx, programId);
  if (!read) return { events: [], unknown: [], failed: true, truncated: false };
  const events: TributaryEvent[] = [];
  const unknown: DecodedTransaction['unknown'] = [];
  read.all.forEach((p, index) => {
    const decoded: DecodedEvent | undefined = decodeEventBytes(p.bytes, p.start);
    if (!decoded) {
      unknown.push({ ixPath: p.ixPath, index, payload: p.bytes.toString('base64', p.start) });
      return;
    }
    events.push({
      id: eventId(signature, p.ixPath, index), signature, slot: tx.slot,
      blockTime: tx.blockTime ?? null, ixPath: p.ixPath, index, ...decoded,
    });
  });
  if (read.splits.length > 0) {
    const records = events.filter((e): e is TributaryEvent<'PaymentRecord'> => e.name === 'PaymentRecord');
    for (const [at, split] of splitsOf(records, read.splits)) records[at]!.data = { ...records[at]!.data, fee_split: split };
  }
  return { events, unknown, failed: false, truncated: read.truncated };
}

/** decodeTransaction's result with each event as its stream entry's text (what serializeEvent writes of it). */
export interface SerializedTransaction extends Omit<DecodedTransaction, 'events'> { events: SerializedEvent[] }

/**
 * decodeTransaction with every event written straight to its stream entry's text, the
 * text serializeEvent writes of decodeTransaction's event: the same envelope fields in
 * the same order, the data from the bytes by the compiled writers (borsh-json-writer.ts), a
 * fee split after the data's own fields. No event object is built on the way: the
 * indexer only appends the text, and the objects were built to be stringified at once.
 */
/** `,"name":<name>,"data":` of each event name met, written once */
const nameMembers = new Map<string, string>();

function nameMember(name: string): string {
  let member = nameMembers.get(name);
  if (member === undefined) {
    member = `,"name":${JSON.stringify(name)},"data":`;
    nameMembers.set(name, member);
  }
  return member;
}

/**
 * `text` made one flat string. A text built by concatenation is a tree of its parts in
 * V8 until something reads it by position; an entry waits for its append through
 * several minor collections, each copying the whole tree of the entry's pieces (tens per
 * event), and Redis's client flattens it in the end anyway. Read once here, it is copied
 * into one string while its pieces are still new, and they die young.
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}

/** A PaymentRecord's parts, kept until the transaction's fee splits are matched to it. */
interface RecordEntry { ixPath: string; index: number; members: string; at: number }

/**
 * One transaction's entries as they are written: what every entry shares, and what is
 * written so far. One object per transaction, passed to module functions: closures made
 * per transaction cost more (each is allocated, and named again under tsx).
 */
interface EntryWriter {
  signature: string;
  /** the signature needs no escape in JSON (base58 never does) */
  plain: boolean;
  /** the members from `,"signature":` to `"ixPath":"` */
  head: string;
  events: SerializedEvent[];
  unknown: SerializedTransaction['unknown'];
  /** PaymentRecords waiting for their entries, when the transaction logged fee splits */
  records: RecordEntry[] | undefined;
  index: number;
}

function entryText(w: EntryWriter, id: string, ixPath: string, index: number, name: string, data: string): string {
  // an ixPath (digits, '.', '-') needs no escape either
  return flat(`{"id":${w.plain ? `"${id}"` : JSON.stringify(id)}${w.head}${ixPath}","index":${index}${nameMember(name)}${data}}`);
}

/**
 * The entry of the event in bytes[start..], or an unknown payload; either takes the next
 * index. A PaymentRecord of a transaction that logged fee splits is written once its
 * split is known (serializeTransaction), so its text is not written twice.
 */
function writeEntry(w: EntryWriter, ixPath: string, bytes: Buffer, start: number): void {
  const index = w.index;
  w.index += 1;
  const e = writeEventMembers(bytes, start);
  if (!e || !isEventName(e.name)) {
    w.unknown.push({ ixPath, index, payload: bytes.toString('base64', start) });
    return;
  }
  const id = eventId(w.signature, ixPath, index);
  if (w.records !== undefined && e.name === 'PaymentRecord') {
    w.records.push({ ixPath, index, members: e.members, at: w.events.length });
    w.events.push({ id, payload: '' });
    return;
  }
  w.events.push({ id, payload: entryText(w, id, ixPath, index, e.name, `{${e.members}}`) });
}

export function serializeTransaction(tx: TransactionJson, signature: string, programId: string): SerializedTransaction {
  const meta = tx.meta;
  if (!meta || (meta.err !== null && meta.err !== undefined)) return { events: [], unknown: [], failed: true, truncated: false };
  const logs = readProgramLogs(meta.logMessages ?? [], programId);
  // signatures are base58, whose JSON text is the text quoted; anything else goes through JSON.stringify
  const plain = isBase58(signature, 0, signature.length);
  const w: EntryWriter = {
    signature,
    plain,
    head: `,"signature":${plain ? `"${signature}"` : JSON.stringify(signature)},"slot":${JSON.stringify(tx.slot)},"blockTime":${JSON.stringify(tx.blockTime ?? null)},"ixPath":"`,
    events: [],
    unknown: [],
    records: logs.splits.length > 0 ? [] : undefined,
    index: 0,
  };
  for (const p of logs.payloads) writeEntry(w, p.ixPath, Buffer.from(p.payload, 'base64'), 0);
  for (const p of cpiPayloads(tx, programId)) writeEntry(w, p.ixPath, p.bytes, p.start);
  if (w.records !== undefined && w.records.length > 0) {
    const splits = splitsOf(w.records, logs.splits);
    w.records.forEach((r, i) => {
      const split = splits.get(i);
      const data = split === undefined ? `{${r.members}}` : `{${r.members}${r.members === '' ? '' : ','}"fee_split":${JSON.stringify(split)}}`;
      const event = w.events[r.at]!;
      event.payload = entryText(w, event.id, r.ixPath, r.index, 'PaymentRecord', data);
    });
  }
  return { events: w.events, unknown: w.unknown, failed: false, truncated: logs.truncated };
}
