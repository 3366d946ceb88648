/**
 * The check that lets a stream entry be typed: every field the IDL gives an event has the
 * JSON kind the codec produces for it (event-types.ts declares the same shapes). An entry
 * that fails is a bug or a poison entry, and the reader dead-letters it, as the checked
 * reads of event-data.ts did field by field before. Nested defined types are checked to
 * be an object (struct) or a name or `{kind}` (enum), not field by field.
 */
import { idlType, type IdlField, type IdlTypeRef } from '../idl/index.js';
import { EVENT_NAMES, type EventName } from './catalog.js';
import { isPadding, TEXT_FIELDS, WIDE_INTS } from './json-rules.js';

type Check = (v: unknown) => boolean;

const STRINGS = new Set(['pubkey', ...WIDE_INTS, 'bytes', 'string']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkOf(t: IdlTypeRef): Check {
  if (typeof t === 'string') {
    if (STRINGS.has(t)) return (v) => typeof v === 'string';
    if (t === 'bool') return (v) => typeof v === 'boolean';
    return (v) => typeof v === 'number' && Number.isInteger(v);
  }
  if ('option' in t) { const inner = checkOf(t.option); return (v) => v === null || inner(v); }
  if ('array' in t || 'vec' in t) {
    const inner = checkOf('array' in t ? t.array[0] : t.vec);
    return (v) => Array.isArray(v) && v.every(inner);
  }
  if (idlType(t.defined.name).type.kind === 'struct') return isObject;
  return (v) => typeof v === 'string' || (isObject(v) && typeof v['kind'] === 'string');
}

function fieldChecks(fields: readonly IdlField[]): [string, Check][] {
  const out: [string, Check][] = [];
  for (const f of fields) {
    if (isPadding(f.name)) continue;
    const isByteArray = typeof f.type === 'object' && 'array' in f.type && f.type.array[0] === 'u8';
    out.push([f.name, isByteArray && TEXT_FIELDS.has(f.name) ? (v) => typeof v === 'string' : checkOf(f.type)]);
  }
  return out;
}

const CHECKS = new Map<string, [string, Check][]>(EVENT_NAMES.map((n) => {
  const def = idlType(n);
  return [n, def.type.kind === 'struct' ? fieldChecks(def.type.fields ?? []) : []];
}));

/** Throws unless `data` has every field of event `name` with the codec's JSON kind. */
export function checkEventData(name: EventName, data: Record<string, unknown>): void {
  for (const [field, ok] of CHECKS.get(name) ?? []) {
    const v = data[field];
    if (v === undefined) throw new Error(`event data has no field ${field}`);
    if (!ok(v)) throw new Error(`event field ${field} of ${name} does not match the IDL`);
  }
}
