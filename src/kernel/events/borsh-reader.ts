/**
 * Event payloads read straight from their Borsh bytes into the codec's JSON form: what
 * Anchor's BorshCoder followed by the codec's normalization produces (codec.ts states the
 * rules), without the intermediate BN, PublicKey and layout objects, which cost most of
 * the ingest's decode. Each IDL type is compiled once into a reader function that reads
 * in place over the payload's buffer (no copies, no per-value Buffer views); public keys
 * go through a bounded cache, as the same gateways, payers and recipients recur in event
 * after event. Unit tests check it against Anchor's coder over every event type
 * (codec-borsh-reader.test.ts) and against a plain reference reader with edge values
 * (indexer-decode-reference.test.ts). borsh-json-writer.ts writes the same values as JSON text
 * with the same compiled steps; what it needs of them is exported for it alone.
 */
import { base58 } from './base58.js';
import { idlEvents, idlType, type IdlField, type IdlTypeRef } from '../idl/index.js';
import { isPadding, RAW_KEPT, TEXT_FIELDS } from './json-rules.js';
import type { EventData, Json } from './json-value.js';

/** A cursor over one payload; reads past its end throw RangeError. */
export interface Reader { buf: Buffer; at: number }
/** A compiled step: reads one value from the cursor, as a V. */
export type Step<V> = (r: Reader) => V;
export type Read = Step<Json>;

/** Moves past n bytes and returns where they start. */
export function advance(r: Reader, n: number): number {
  const at = r.at;
  if (at + n > r.buf.length) throw new RangeError('payload too short');
  r.at = at + n;
  return at;
}

/** A byte that must be 0 or 1 (Borsh's bool and Option tag; Anchor refuses any other). */
export function flag(r: Reader, what: string): boolean {
  const b = r.buf[advance(r, 1)]!;
  if (b !== 0 && b !== 1) throw new RangeError(`invalid ${what} byte ${b}`);
  return b === 1;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** codec.ts's text rule: trailing NULs cut, an inner NUL as U+FFFD. */
export function fixedBytesToText(bytes: Uint8Array): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end -= 1;
  return utf8.decode(bytes.subarray(0, end)).replace(/\u0000/g, '\uFFFD');
}

/** The same rule over buf[start, start + size): ASCII without an inner NUL (most texts) read as latin1. */
export function textAt(buf: Buffer, start: number, size: number): string {
  let end = start + size;
  while (end > start && buf[end - 1] === 0) end -= 1;
  for (let i = start; i < end; i += 1) {
    const b = buf[i]!;
    if (b === 0 || b > 0x7f) return fixedBytesToText(buf.subarray(start, end));
  }
  return buf.toString('latin1', start, end);
}

/**
 * Keys written lately, in a direct-mapped table: slot h holds one key's 32 bytes as eight
 * 32-bit words at KEY_WORDS[8h..8h+8) and its base58 at KEY_TEXTS[h]. A key's slot comes
 * from its first two words; a key that lands on an occupied slot replaces the one there.
 * Looking a key up reads one contiguous run of words and one array element: the same
 * gateways, payers and recipients recur in event after event, and a Map of the keys as
 * text cost an allocation and a hash of 32 characters for each key read.
 */
const KEY_SLOTS = 1 << 14;
const KEY_WORDS = new Int32Array(KEY_SLOTS * 8);
const KEY_TEXTS: (string | undefined)[] = new Array<string | undefined>(KEY_SLOTS).fill(undefined);

/** The base58 of buf[at, at + 32), from the table when this key was written lately. */
function pubkeyAt(buf: Buffer, at: number): string {
  const w0 = buf.readInt32LE(at);
  const w1 = buf.readInt32LE(at + 4);
  const slot = (Math.imul(w0, 0x9e3779b1) ^ w1) >>> 18;
  const base = slot * 8;
  const text = KEY_TEXTS[slot];
  if (text !== undefined && KEY_WORDS[base] === w0 && KEY_WORDS[base + 1] === w1
    && KEY_WORDS[base + 2] === buf.readInt32LE(at + 8) && KEY_WORDS[base + 3] === buf.readInt32LE(at + 12)
    && KEY_WORDS[base + 4] === buf.readInt32LE(at + 16) && KEY_WORDS[base + 5] === buf.readInt32LE(at + 20)
    && KEY_WORDS[base + 6] === buf.readInt32LE(at + 24) && KEY_WORDS[base + 7] === buf.readInt32LE(at + 28)) {
    return text;
  }
  const written = base58(buf.subarray(at, at + 32));
  for (let i = 0; i < 8; i += 1) KEY_WORDS[base + i] = buf.readInt32LE(at + 4 * i);
  KEY_TEXTS[slot] = written;
  return written;
}

const TWO32 = 2 ** 32;
/** below 2^53 a double holds a u64 exactly, and String() writes it as BigInt would */
const EXACT_HIGH = 2 ** 21;

export const PRIMITIVES: Record<string, Read> = {
  bool: (r) => flag(r, 'bool'),
  u8: (r) => r.buf[advance(r, 1)]!,
  i8: (r) => r.buf.readInt8(advance(r, 1)),
  u16: (r) => r.buf.readUInt16LE(advance(r, 2)),
  i16: (r) => r.buf.readInt16LE(advance(r, 2)),
  u32: (r) => r.buf.readUInt32LE(advance(r, 4)),
  i32: (r) => r.buf.readInt32LE(advance(r, 4)),
  u64: (r) => {
    const at = advance(r, 8);
    const hi = r.buf.readUInt32LE(at + 4);
    return hi < EXACT_HIGH ? String(hi * TWO32 + r.buf.readUInt32LE(at)) : r.buf.readBigUInt64LE(at).toString();
  },
  i64: (r) => {
    const at = advance(r, 8);
    const hi = r.buf.readInt32LE(at + 4);
    return hi < EXACT_HIGH && hi >= -EXACT_HIGH ? String(hi * TWO32 + r.buf.readUInt32LE(at)) : r.buf.readBigInt64LE(at).toString();
  },
  u128: (r) => {
    const at = advance(r, 16);
    return ((r.buf.readBigUInt64LE(at + 8) << 64n) | r.buf.readBigUInt64LE(at)).toString();
  },
  i128: (r) => {
    const at = advance(r, 16);
    return ((r.buf.readBigInt64LE(at + 8) << 64n) | r.buf.readBigUInt64LE(at)).toString();
  },
  pubkey: (r) => pubkeyAt(r.buf, advance(r, 32)),
  bytes: (r) => {
    const n = r.buf.readUInt32LE(advance(r, 4));
    const at = advance(r, n);
    return r.buf.toString('hex', at, at + n);
  },
  string: (r) => {
    const n = r.buf.readUInt32LE(advance(r, 4));
    const at = advance(r, n);
    return r.buf.toString('utf8', at, at + n);
  },
};

function compileType(type: IdlTypeRef): Read {
  if (typeof type === 'string') {
    const read = PRIMITIVES[type];
    if (!read) throw new Error(`IDL type ${type} is not read here`);
    return read;
  }
  if ('option' in type) {
    const inner = compileType(type.option);
    return (r) => (flag(r, 'option') ? inner(r) : null);
  }
  if ('array' in type) {
    const [of, n] = type.array;
    const inner = compileType(of);
    return (r) => {
      const out = new Array<Json>(n);
      for (let i = 0; i < n; i += 1) out[i] = inner(r);
      return out;
    };
  }
  if ('vec' in type) {
    const inner = compileType(type.vec);
    return (r) => {
      const n = r.buf.readUInt32LE(advance(r, 4));
      const out: Json[] = [];
      for (let i = 0; i < n; i += 1) out.push(inner(r));
      return out;
    };
  }
  return compileDefined(type.defined.name);
}

/** The size of a field read as text (a fixed u8 array named in TEXT_FIELDS); 0 for any other field. */
export function textSize(f: IdlField): number {
  const t = f.type;
  return typeof t === 'object' && 'array' in t && t.array[0] === 'u8' && TEXT_FIELDS.has(f.name) ? t.array[1] : 0;
}

/** One step of a struct: a value, a text (with its raw hex when kept), or bytes passed over. */
interface FieldStep { name: string; read: Read | undefined; text: number; raw: boolean; skip: boolean }

function compileFields(fields: readonly IdlField[]): (r: Reader, out: EventData) => void {
  const steps: FieldStep[] = fields.map((f) => {
    const text = textSize(f);
    return { name: f.name, read: text > 0 ? undefined : compileType(f.type), text, raw: RAW_KEPT.has(f.name), skip: isPadding(f.name) };
  });
  return (r, out) => {
    for (const s of steps) {
      if (s.read === undefined) {
        const at = advance(r, s.text);
        if (s.skip) continue;
        out[s.name] = textAt(r.buf, at, s.text);
        if (s.raw) out[`${s.name}_hex`] = r.buf.toString('hex', at, at + s.text);
        continue;
      }
      const v = s.read(r);
      if (!s.skip) out[s.name] = v;
    }
  };
}

function isNamedField(f: IdlField | IdlTypeRef): f is IdlField {
  return typeof f === 'object' && f !== null && 'name' in f && typeof f.name === 'string' && 'type' in f;
}

/** How a defined type's parts become steps of one kind: the readers' values, the writers' JSON text. */
export interface DefinedParts<V> {
  compiled: Map<string, Step<V>>;
  struct(fields: readonly IdlField[]): Step<V>;
  /** a variant without fields */
  unit(kind: string): Step<V>;
  /** a variant with named fields */
  named(kind: string, fields: readonly IdlField[]): Step<V>;
  /** a variant with unnamed fields */
  tuple(kind: string, items: readonly IdlTypeRef[]): Step<V>;
}

/** A defined type's step, compiled once: a struct's fields, or an enum's variant chosen by its index byte. */
export function compileDefinedWith<V>(parts: DefinedParts<V>, name: string): Step<V> {
  const known = parts.compiled.get(name);
  if (known) return known;
  // a type that refers to itself reads through this until compiled
  let step: Step<V> = () => { throw new Error(`IDL type ${name} is still being compiled`); };
  parts.compiled.set(name, (r) => step(r));
  const def = idlType(name);
  if (def.type.kind === 'struct') {
    step = parts.struct(def.type.fields ?? []);
  } else {
    const variants = def.type.variants.map((v): Step<V> => {
      const fields = v.fields ?? [];
      if (fields.length === 0) return parts.unit(v.name);
      if (isNamedField(fields[0]!)) return parts.named(v.name, fields as IdlField[]);
      return parts.tuple(v.name, fields as IdlTypeRef[]);
    });
    step = (r) => {
      const index = r.buf[advance(r, 1)]!;
      const variant = variants[index];
      if (!variant) throw new RangeError(`bad enum value for ${name}`);
      return variant(r);
    };
  }
  parts.compiled.set(name, step);
  return step;
}

/** An object of the fields' values, after a `kind` member for an enum's variant. */
function compileObject(fields: readonly IdlField[], kind?: string): Read {
  const fill = compileFields(fields);
  return (r) => {
    const out: EventData = kind === undefined ? {} : { kind };
    fill(r, out);
    return out;
  };
}

const READ_PARTS: DefinedParts<Json> = {
  compiled: new Map(),
  struct: (fields) => compileObject(fields),
  unit: (kind) => () => kind,
  named: (kind, fields) => compileObject(fields, kind),
  tuple(kind, items) {
    const tuple = items.map(compileType);
    if (tuple.length === 1) return (r) => ({ kind, value: tuple[0]!(r) });
    return (r) => ({ kind, values: tuple.map((t) => t(r)) });
  },
};

const compileDefined = (name: string): Read => compileDefinedWith(READ_PARTS, name);

/** Each event's compiled step by its discriminator, read as the first 8 bytes' two little-endian u32 halves. */
type EventTable<V> = Map<number, Map<number, { name: string; step: Step<V> }>>;

export function eventTable<V>(compile: (name: string) => Step<V>): EventTable<V> {
  const table: EventTable<V> = new Map();
  for (const e of idlEvents) {
    const d = Buffer.from(e.discriminator);
    const lo = d.readUInt32LE(0);
    const inner = table.get(lo) ?? new Map<number, { name: string; step: Step<V> }>();
    inner.set(d.readUInt32LE(4), { name: e.name, step: compile(e.name) });
    table.set(lo, inner);
  }
  return table;
}

/** The event whose discriminator starts at `start`; undefined for too few bytes or an unknown one. */
export function eventAt<V>(table: EventTable<V>, buf: Buffer, start: number): { name: string; step: Step<V> } | undefined {
  if (buf.length - start < 8) return undefined;
  return table.get(buf.readUInt32LE(start))?.get(buf.readUInt32LE(start + 4));
}

const readers = eventTable(compileDefined);

/**
 * Name and JSON fields of one event's bytes (discriminator first, the payload of a
 * `Program data:` line or of a self-CPI after its tag), from `start`; undefined for an
 * unknown discriminator or bytes that do not hold the event.
 */
export function readEventBytes(buf: Buffer, start = 0): { name: string; data: EventData } | undefined {
  const event = eventAt(readers, buf, start);
  if (event === undefined) return undefined;
  try {
    return { name: event.name, data: event.step({ buf, at: start + 8 }) as EventData };
  } catch {
    return undefined;
  }
}

/** readEventBytes of a base64 payload. */
export function readEventPayload(base64: string): { name: string; data: EventData } | undefined {
  return readEventBytes(Buffer.from(base64, 'base64'));
}
