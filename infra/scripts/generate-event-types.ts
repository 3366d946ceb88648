/**
 * Generates src/kernel/events/event-types.ts from the vendored IDL: one TypeScript type per
 * program event, in the JSON form the codec (src/kernel/events/codec.ts) produces, and the
 * discriminated union of all of them. Run after updating src/kernel/idl/tributary.json:
 *
 *   node --import tsx infra/scripts/generate-event-types.ts
 *
 * test/unit/events-types.test.ts fails while the checked-in file differs from the output.
 * The mapping below mirrors the codec's rules; the two change together.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
// The codec's rules: text byte arrays become strings, memos keep their bytes as hex.
import { isPadding, RAW_KEPT, TEXT_FIELDS, WIDE_INTS } from '../../src/kernel/events/json-rules.js';

type TypeRef = string | { array: [TypeRef, number] } | { option: TypeRef } | { vec: TypeRef } | { defined: { name: string } };
interface Field { name: string; type: TypeRef }
interface Variant { name: string; fields?: (Field | TypeRef)[] }
type TypeDef = { name: string; type: { kind: 'struct'; fields?: Field[] } | { kind: 'enum'; variants: Variant[] } };
interface IdlJson { events: { name: string }[]; types: TypeDef[] }

export const OUTPUT = fileURLToPath(new URL('../../src/kernel/events/event-types.ts', import.meta.url));
const IDL = fileURLToPath(new URL('../../src/kernel/idl/tributary.json', import.meta.url));

const NUMBERS = new Set(['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'f64']);
/**
 * Fields the indexer adds to an event from what the chain reports besides it (decode.ts):
 * execute_payment logs its fee split on the line after PaymentRecord.
 */
const OBSERVED_FIELDS: Readonly<Record<string, string[]>> = {
  PaymentRecord: ['/** the split execute_payment logged (`Payment executed: …`); absent when it logged none */', 'fee_split?: FeeSplit;'],
};
const isField = (f: Field | TypeRef): f is Field => typeof f === 'object' && 'name' in f && 'type' in f;

function primitive(t: string): string {
  if (t === 'pubkey') return 'Pubkey';
  if (WIDE_INTS.has(t)) return 'DecimalString';
  if (t === 'bytes') return 'HexString';
  if (t === 'bool') return 'boolean';
  if (t === 'string') return 'string';
  if (NUMBERS.has(t)) return 'number';
  throw new Error(`no mapping for IDL type ${t}`);
}

function typeOf(t: TypeRef, used: Set<string>): string {
  if (typeof t === 'string') return primitive(t);
  if ('option' in t) return `${typeOf(t.option, used)} | null`;
  if ('array' in t) return `${wrap(typeOf(t.array[0], used))}[]`;
  if ('vec' in t) return `${wrap(typeOf(t.vec, used))}[]`;
  used.add(t.defined.name);
  return t.defined.name;
}

const wrap = (s: string): string => (s.includes('|') ? `(${s})` : s);

function fieldLines(fields: readonly Field[], used: Set<string>, indent: string): string[] {
  const out: string[] = [];
  for (const f of fields) {
    if (isPadding(f.name)) continue;
    const isByteArray = typeof f.type === 'object' && 'array' in f.type && f.type.array[0] === 'u8';
    if (isByteArray && TEXT_FIELDS.has(f.name)) {
      out.push(`${indent}${f.name}: string;`);
      // optional: entries written by hand (tests, tools) may carry the text alone
      if (RAW_KEPT.has(f.name)) out.push(`${indent}${f.name}_hex?: HexString;`);
    } else {
      out.push(`${indent}${f.name}: ${typeOf(f.type, used)};`);
    }
  }
  return out;
}

function variantType(v: Variant, used: Set<string>): string {
  const fields = v.fields ?? [];
  if (fields.length === 0) return `'${v.name}'`;
  if (fields.every(isField)) return `{ kind: '${v.name}'; ${fieldLines(fields, used, '').join(' ')} }`;
  const tuple = fields.map((t) => typeOf(t as TypeRef, used));
  if (tuple.length === 1) return `{ kind: '${v.name}'; value: ${tuple[0]} }`;
  return `{ kind: '${v.name}'; values: [${tuple.join(', ')}] }`;
}

function declaration(def: TypeDef, used: Set<string>): string {
  if (def.type.kind === 'struct') {
    // type literals rather than interfaces: they are assignable to the codec's Json
    const observed = (OBSERVED_FIELDS[def.name] ?? []).map((l) => `  ${l}`);
    return [`export type ${def.name} = {`, ...fieldLines(def.type.fields ?? [], used, '  '), ...observed, '};'].join('\n');
  }
  const variants = def.type.variants.map((v) => `  | ${variantType(v, used)}`);
  return [`export type ${def.name} =`, ...variants].join('\n') + ';';
}

/** The generated module's text for an IDL (pure: the test compares it with the file). */
export function renderEventTypes(idl: IdlJson): string {
  const defs = new Map(idl.types.map((t) => [t.name, t]));
  const events = idl.events.map((e) => e.name).sort();
  const emitted: string[] = [];
  const done = new Set<string>();
  const pending = [...events];
  // events first (in name order), then every type they reach, each once, in discovery order
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (done.has(name)) continue;
    const def = defs.get(name);
    if (!def) throw new Error(`IDL has no type ${name}`);
    done.add(name);
    const used = new Set<string>();
    emitted.push(declaration(def, used));
    for (const u of used) if (!done.has(u)) pending.push(u);
  }
  return [
    '// Generated from src/kernel/idl/tributary.json by infra/scripts/generate-event-types.ts. Do not edit:',
    '// run `node --import tsx infra/scripts/generate-event-types.ts` after changing the IDL.',
    '// The JSON form of every program event as src/kernel/events/codec.ts decodes it.',
    '',
    '/** A public key, base58. */',
    'export type Pubkey = string;',
    '/** A u64/i64/u128/i128 as a decimal string (JSON numbers lose precision past 2^53). */',
    'export type DecimalString = string;',
    '/** Raw bytes, lowercase hex. */',
    'export type HexString = string;',
    '',
    '/** What execute_payment moved, as its log line reports it (base units, decimal strings). */',
    'export type FeeSplit = {',
    '  recipient_amount: DecimalString;',
    '  /** what the gateway fee account kept (the scheduler cut not included) */',
    '  gateway_residual: DecimalString;',
    '  /** paid to a permissionless caller; 0 when the gateway signer called (merged into its fee account) */',
    '  scheduler_cut: DecimalString;',
    '  protocol_cut: DecimalString;',
    '};',
    '',
    ...emitted.flatMap((d) => [d, '']),
    '/** Each event name with the type of its data. */',
    'export interface EventDataMap {',
    ...events.map((n) => `  ${n}: ${n};`),
    '}',
    '',
    'export const GENERATED_EVENT_NAMES = [',
    ...events.map((n) => `  '${n}',`),
    '] as const;',
    '',
  ].join('\n');
}

export function readIdl(): IdlJson {
  return JSON.parse(readFileSync(IDL, 'utf8')) as IdlJson;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OUTPUT, renderEventTypes(readIdl()));
  console.log(`wrote ${OUTPUT}`);
}
