/**
 * Event payloads written straight from their Borsh bytes to their JSON text, as
 * JSON.stringify writes what the readers of borsh-reader.ts return (same fields, same
 * order), without the intermediate objects: the indexer puts every event into the stream
 * as text, and built the objects only to stringify them. Each IDL type is compiled once,
 * with the readers' own steps for the values; the integration test of the reference
 * reader checks the text against JSON.stringify of the reader's result for every event type.
 */
import { idlType, type IdlField, type IdlTypeRef } from '../idl/index.js';
import {
  advance, compileDefinedWith, eventAt, eventTable, flag, PRIMITIVES, textAt, textSize,
  type DefinedParts, type Read, type Step,
} from './borsh-reader.js';
import { isPadding, RAW_KEPT } from './json-rules.js';

type Write = Step<string>;
const quoted = (read: Read): Write => (r) => `"${read(r) as string}"`;
const number = (read: Read): Write => (r) => (read(r) as number).toString();

const WRITE_PRIMITIVES: Record<string, Write> = {
  bool: (r) => (flag(r, 'bool') ? 'true' : 'false'),
  u8: number(PRIMITIVES['u8']!),
  i8: number(PRIMITIVES['i8']!),
  u16: number(PRIMITIVES['u16']!),
  i16: number(PRIMITIVES['i16']!),
  u32: number(PRIMITIVES['u32']!),
  i32: number(PRIMITIVES['i32']!),
  // decimal digits, base58 and hex need no escaping
  u64: quoted(PRIMITIVES['u64']!),
  i64: quoted(PRIMITIVES['i64']!),
  u128: quoted(PRIMITIVES['u128']!),
  i128: quoted(PRIMITIVES['i128']!),
  pubkey: quoted(PRIMITIVES['pubkey']!),
  bytes: quoted(PRIMITIVES['bytes']!),
  string: (r) => JSON.stringify(PRIMITIVES['string']!(r)),
};

function compileWriteType(type: IdlTypeRef): Write {
  if (typeof type === 'string') {
    const write = WRITE_PRIMITIVES[type];
    if (!write) throw new Error(`IDL type ${type} is not read here`);
    return write;
  }
  if ('option' in type) {
    const inner = compileWriteType(type.option);
    return (r) => (flag(r, 'option') ? inner(r) : 'null');
  }
  if ('array' in type || 'vec' in type) {
    const inner = compileWriteType('array' in type ? type.array[0] : type.vec);
    const fixed = 'array' in type ? type.array[1] : -1;
    return (r) => {
      const n = fixed >= 0 ? fixed : r.buf.readUInt32LE(advance(r, 4));
      let out = '[';
      for (let i = 0; i < n; i += 1) out += i === 0 ? inner(r) : `,${inner(r)}`;
      return `${out}]`;
    };
  }
  return compileWriteDefined(type.defined.name);
}

/** A struct's (or a variant's) fields as JSON members, `"a":1,"b":"x"`, without braces; '' for none. */
function compileWriteFields(fields: readonly IdlField[]): Write {
  // which fields are skipped is fixed, so each member's separator is too: the first
  // written has none, every later one a comma before its key
  let first = true;
  const steps = fields.map((f) => {
    const text = textSize(f);
    const skip = isPadding(f.name);
    const key = `${first || skip ? '' : ','}${JSON.stringify(f.name)}:`;
    if (!skip) first = false;
    return {
      key, rawKey: `,${JSON.stringify(`${f.name}_hex`)}:`,
      write: text > 0 ? undefined : compileWriteType(f.type), text, raw: RAW_KEPT.has(f.name), skip,
    };
  });
  return (r) => {
    let out = '';
    for (const s of steps) {
      if (s.write === undefined) {
        const at = advance(r, s.text);
        if (s.skip) continue;
        out += `${s.key}${JSON.stringify(textAt(r.buf, at, s.text))}`;
        if (s.raw) out += `${s.rawKey}"${r.buf.toString('hex', at, at + s.text)}"`;
        continue;
      }
      const v = s.write(r);
      if (!s.skip) out += `${s.key}${v}`;
    }
    return out;
  };
}

const WRITE_PARTS: DefinedParts<string> = {
  compiled: new Map(),
  struct(fields) {
    const members = compileWriteFields(fields);
    return (r) => `{${members(r)}}`;
  },
  unit(kind) {
    const unit = JSON.stringify(kind);
    return () => unit;
  },
  named(kind, fields) {
    const head = `"kind":${JSON.stringify(kind)}`;
    const members = compileWriteFields(fields);
    return (r) => {
      const m = members(r);
      return m === '' ? `{${head}}` : `{${head},${m}}`;
    };
  },
  tuple(kind, items) {
    const head = `"kind":${JSON.stringify(kind)}`;
    const tuple = items.map(compileWriteType);
    if (tuple.length === 1) return (r) => `{${head},"value":${tuple[0]!(r)}}`;
    return (r) => `{${head},"values":[${tuple.map((t) => t(r)).join(',')}]}`;
  },
};

const compileWriteDefined = (name: string): Write => compileDefinedWith(WRITE_PARTS, name);

/** Each event's fields as members, without the braces (an event is always a struct). */
const memberWriters = eventTable((name): Write => {
  const def = idlType(name);
  if (def.type.kind !== 'struct') throw new Error(`IDL event ${name} is not a struct`);
  return compileWriteFields(def.type.fields ?? []);
});

/**
 * The members of an event's JSON object, `"a":1,"b":"x"` ('' for none), written from its
 * bytes: the indexer wraps them in braces itself, with a member of its own after them
 * where it has one (a fee split), without cutting the closing brace off a written text.
 * Undefined for an unknown discriminator or bytes that do not hold the event.
 */
export function writeEventMembers(buf: Buffer, start = 0): { name: string; members: string } | undefined {
  const event = eventAt(memberWriters, buf, start);
  if (event === undefined) return undefined;
  try {
    return { name: event.name, members: event.step({ buf, at: start + 8 }) };
  } catch {
    return undefined;
  }
}

/**
 * readEventBytes with the fields as their JSON text: `json` is JSON.stringify of what
 * readEventBytes returns as `data`; undefined exactly where that is.
 */
export function writeEventJson(buf: Buffer, start = 0): { name: string; json: string } | undefined {
  const e = writeEventMembers(buf, start);
  return e === undefined ? undefined : { name: e.name, json: `{${e.members}}` };
}
