/**
 * Event payloads read straight from their Borsh bytes into the codec's JSON form, by
 * walking the IDL: what Anchor's BorshCoder followed by the codec's normalization
 * produces (codec.ts states the rules), without the intermediate BN, PublicKey and
 * layout objects, which cost most of the ingest's decode. A unit test checks it against
 * Anchor's coder over every event type (codec-borsh-reader.test.ts).
 */
import { base58 } from './base58.js';
import { idlEvents, idlType, type IdlField, type IdlTypeRef } from '../idl/index.js';
import { isPadding, RAW_KEPT, TEXT_FIELDS } from './json-rules.js';
import type { EventData, Json } from './json-value.js';

/** A cursor over one payload; reads past its end throw RangeError. */
interface Reader { buf: Buffer; at: number }

function take(r: Reader, n: number): Buffer {
  if (r.at + n > r.buf.length) throw new RangeError('payload too short');
  const out = r.buf.subarray(r.at, r.at + n);
  r.at += n;
  return out;
}

/** A byte that must be 0 or 1 (Borsh's bool and Option tag; Anchor refuses any other). */
function flag(r: Reader, what: string): boolean {
  const b = take(r, 1)[0];
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

function readValue(r: Reader, type: IdlTypeRef): Json {
  if (typeof type === 'string') return readPrimitive(r, type);
  if ('option' in type) return flag(r, 'option') ? readValue(r, type.option) : null;
  if ('array' in type) {
    const [inner, n] = type.array;
    const out: Json[] = new Array<Json>(n);
    for (let i = 0; i < n; i += 1) out[i] = readValue(r, inner);
    return out;
  }
  if ('vec' in type) {
    const n = take(r, 4).readUInt32LE(0);
    const out: Json[] = [];
    for (let i = 0; i < n; i += 1) out.push(readValue(r, type.vec));
    return out;
  }
  return readDefined(r, type.defined.name);
}

function readPrimitive(r: Reader, type: string): Json {
  switch (type) {
    case 'bool': return flag(r, 'bool');
    case 'u8': return take(r, 1)[0]!;
    case 'i8': return take(r, 1).readInt8(0);
    case 'u16': return take(r, 2).readUInt16LE(0);
    case 'i16': return take(r, 2).readInt16LE(0);
    case 'u32': return take(r, 4).readUInt32LE(0);
    case 'i32': return take(r, 4).readInt32LE(0);
    case 'u64': return take(r, 8).readBigUInt64LE(0).toString();
    case 'i64': return take(r, 8).readBigInt64LE(0).toString();
    case 'u128': {
      const b = take(r, 16);
      return ((b.readBigUInt64LE(8) << 64n) | b.readBigUInt64LE(0)).toString();
    }
    case 'i128': {
      const b = take(r, 16);
      return ((b.readBigInt64LE(8) << 64n) | b.readBigUInt64LE(0)).toString();
    }
    case 'pubkey': return base58(take(r, 32));
    case 'bytes': return take(r, take(r, 4).readUInt32LE(0)).toString('hex');
    case 'string': return take(r, take(r, 4).readUInt32LE(0)).toString('utf8');
    default: throw new Error(`IDL type ${type} is not read here`);
  }
}

function readFields(r: Reader, fields: readonly IdlField[]): EventData {
  const out: EventData = {};
  for (const f of fields) {
    const t = f.type;
    if (typeof t === 'object' && 'array' in t && t.array[0] === 'u8' && TEXT_FIELDS.has(f.name)) {
      const bytes = take(r, t.array[1]);
      if (isPadding(f.name)) continue;
      out[f.name] = fixedBytesToText(bytes);
      if (RAW_KEPT.has(f.name)) out[`${f.name}_hex`] = bytes.toString('hex');
      continue;
    }
    const v = readValue(r, t);
    if (!isPadding(f.name)) out[f.name] = v;
  }
  return out;
}

function readDefined(r: Reader, name: string): Json {
  const def = idlType(name);
  if (def.type.kind === 'struct') return readFields(r, def.type.fields ?? []);
  const index = take(r, 1)[0]!;
  const variant = def.type.variants[index];
  if (!variant) throw new RangeError(`bad enum value for ${name}`);
  const kind = variant.name;
  const fields = variant.fields ?? [];
  if (fields.length === 0) return kind;
  const first = fields[0];
  if (typeof first === 'object' && first !== null && 'name' in first && typeof first.name === 'string' && 'type' in first) {
    return { kind, ...readFields(r, fields as IdlField[]) };
  }
  const tuple = fields.map((t) => readValue(r, t as IdlTypeRef));
  return tuple.length === 1 ? { kind, value: tuple[0] ?? null } : { kind, values: tuple };
}

const byDiscriminator = new Map(idlEvents.map((e) => [Buffer.from(e.discriminator).toString('hex'), e.name]));

/**
 * Name and JSON fields of one `Program data:` payload (base64, discriminator first);
 * undefined for an unknown discriminator or bytes that do not hold the event.
 */
export function readEventPayload(base64: string): { name: string; data: EventData } | undefined {
  const buf = Buffer.from(base64, 'base64');
  if (buf.length < 8) return undefined;
  const name = byDiscriminator.get(buf.toString('hex', 0, 8));
  if (name === undefined) return undefined;
  try {
    return { name, data: readDefined({ buf, at: 8 }, name) as EventData };
  } catch {
    return undefined;
  }
}
