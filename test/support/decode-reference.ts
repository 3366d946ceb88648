/**
 * A plain reference reader of event payloads, written for clarity and not for speed, to
 * check the indexer's compiled reader against (indexer-decode-reference.test.ts). It walks
 * the IDL at every value and follows codec.ts's JSON rules as written there: keys in
 * base58 (bs58), 64- and 128-bit integers as decimal strings through BigInt, text byte
 * arrays as UTF-8 with trailing NULs cut and an inner NUL as U+FFFD, memos with their
 * raw bytes as `<field>_hex`, unit variants by name, variants with fields as
 * `{kind, ...fields}`, a single tuple field as `{kind, value}`, Option as null or the
 * value, padding left out. A payload too short, an Option or bool byte other than 0 or
 * 1, or an enum tag past the last variant gives undefined.
 */
import bs58 from 'bs58';
import { idlEvents, idlType, type IdlField, type IdlTypeRef } from '../../src/kernel/idl/index.js';
import type { Json } from '../../src/kernel/events/json-value.js';

const TEXT = new Set(['memo', 'name', 'url', 'referral_code']);
const KEEP_RAW = new Set(['memo']);
const padding = (name: string): boolean => name.startsWith('_') || name.startsWith('padding');

class Cursor {
  at = 0;
  constructor(readonly bytes: Buffer) {}

  next(n: number): Buffer {
    if (this.at + n > this.bytes.length) throw new RangeError('payload too short');
    const out = Buffer.from(this.bytes.subarray(this.at, this.at + n));
    this.at += n;
    return out;
  }

  zeroOrOne(): boolean {
    const b = this.next(1)[0];
    if (b === 0) return false;
    if (b === 1) return true;
    throw new RangeError(`byte ${b} is neither 0 nor 1`);
  }
}

function text(bytes: Buffer): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end -= 1;
  return new TextDecoder().decode(bytes.subarray(0, end)).split('\u0000').join('\uFFFD');
}

function value(c: Cursor, type: IdlTypeRef): Json {
  if (typeof type === 'string') {
    switch (type) {
      case 'bool': return c.zeroOrOne();
      case 'u8': return c.next(1).readUInt8(0);
      case 'i8': return c.next(1).readInt8(0);
      case 'u16': return c.next(2).readUInt16LE(0);
      case 'i16': return c.next(2).readInt16LE(0);
      case 'u32': return c.next(4).readUInt32LE(0);
      case 'i32': return c.next(4).readInt32LE(0);
      case 'u64': return c.next(8).readBigUInt64LE(0).toString();
      case 'i64': return c.next(8).readBigInt64LE(0).toString();
      case 'u128': {
        const b = c.next(16);
        return (b.readBigUInt64LE(0) + (b.readBigUInt64LE(8) << 64n)).toString();
      }
      case 'i128': {
        const b = c.next(16);
        return (b.readBigUInt64LE(0) + (b.readBigInt64LE(8) << 64n)).toString();
      }
      case 'pubkey': return bs58.encode(c.next(32));
      case 'bytes': return c.next(c.next(4).readUInt32LE(0)).toString('hex');
      case 'string': return c.next(c.next(4).readUInt32LE(0)).toString('utf8');
      default: throw new Error(`no reference reading of ${type}`);
    }
  }
  if ('option' in type) return c.zeroOrOne() ? value(c, type.option) : null;
  if ('array' in type) return Array.from({ length: type.array[1] }, () => value(c, type.array[0]));
  if ('vec' in type) {
    const n = c.next(4).readUInt32LE(0);
    const out: Json[] = [];
    for (let i = 0; i < n; i += 1) out.push(value(c, type.vec));
    return out;
  }
  return defined(c, type.defined.name);
}

function fields(c: Cursor, list: readonly IdlField[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const f of list) {
    const t = f.type;
    const isText = typeof t === 'object' && 'array' in t && t.array[0] === 'u8' && TEXT.has(f.name);
    if (isText) {
      const raw = c.next(t.array[1]);
      if (padding(f.name)) continue;
      out[f.name] = text(raw);
      if (KEEP_RAW.has(f.name)) out[`${f.name}_hex`] = raw.toString('hex');
    } else {
      const v = value(c, t);
      if (!padding(f.name)) out[f.name] = v;
    }
  }
  return out;
}

function defined(c: Cursor, name: string): Json {
  const def = idlType(name);
  if (def.type.kind === 'struct') return fields(c, def.type.fields ?? []);
  const tag = c.next(1).readUInt8(0);
  const variant = def.type.variants[tag];
  if (variant === undefined) throw new RangeError(`${name} has no variant ${tag}`);
  const list = variant.fields ?? [];
  if (list.length === 0) return variant.name;
  if (typeof list[0] === 'object' && list[0] !== null && 'name' in list[0] && 'type' in list[0]) {
    return { kind: variant.name, ...fields(c, list as IdlField[]) };
  }
  const values = list.map((t) => value(c, t as IdlTypeRef));
  return values.length === 1 ? { kind: variant.name, value: values[0]! } : { kind: variant.name, values };
}

/** Name and fields of an event's bytes (discriminator first); undefined when they hold no event. */
export function referenceDecode(bytes: Buffer): { name: string; data: Json } | undefined {
  if (bytes.length < 8) return undefined;
  const event = idlEvents.find((e) => Buffer.from(e.discriminator).equals(bytes.subarray(0, 8)));
  if (!event) return undefined;
  try {
    const c = new Cursor(bytes);
    c.at = 8;
    return { name: event.name, data: defined(c, event.name) };
  } catch {
    return undefined;
  }
}
