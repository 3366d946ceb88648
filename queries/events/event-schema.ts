/**
 * The API event object, defined once: the archived envelope plus `timestamp` (the block
 * time as ISO 8601) so that clients need not convert. Its `data` is described per event
 * kind by a JSON schema derived from the IDL, following the codec's encoding rules, so the
 * OpenAPI document tells clients the exact fields of each of the 19 kinds.
 */
import { EVENT_NAMES, type EventName } from '../../src/kernel/events/catalog.js';
import { idlType, type IdlField, type IdlTypeRef } from '../../src/kernel/idl/index.js';
import { base58Key, signatureSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { isPadding, TEXT_FIELDS, WIDE_INTS } from '../../src/kernel/events/json-rules.js';

const decimal = (what: string): JsonSchema => ({ type: 'string', pattern: '^-?[0-9]+$', description: `${what} as a decimal string` });

function typeSchema(type: IdlTypeRef): JsonSchema {
  if (typeof type === 'string') {
    if (type === 'pubkey') return base58Key;
    if (type === 'bool') return { type: 'boolean' };
    if (WIDE_INTS.has(type)) return decimal(type);
    if (type === 'bytes') return { type: 'string', description: 'hex' };
    return { type: 'integer', description: type };
  }
  if ('option' in type) return { ...typeSchema(type.option), nullable: true };
  if ('vec' in type) return { type: 'array', items: typeSchema(type.vec) };
  if ('array' in type) {
    const [inner, size] = type.array;
    return { type: 'array', items: typeSchema(inner), minItems: size, maxItems: size };
  }
  return definedSchema(type.defined.name);
}

function fieldsSchema(fields: readonly IdlField[]): { properties: Record<string, JsonSchema>; required: string[] } {
  const properties: Record<string, JsonSchema> = {};
  for (const f of fields) {
    if (isPadding(f.name)) continue;
    const isBytes = typeof f.type === 'object' && 'array' in f.type && f.type.array[0] === 'u8';
    if (isBytes && TEXT_FIELDS.has(f.name)) {
      properties[f.name] = { type: 'string', description: 'UTF-8 text, trailing NULs removed' };
      if (f.name === 'memo') properties['memo_hex'] = { type: 'string', description: 'the raw memo bytes, hex' };
    } else {
      properties[f.name] = typeSchema(f.type);
    }
  }
  return { properties, required: Object.keys(properties) };
}

const amount: JsonSchema = { type: 'string', pattern: '^[0-9]+$' };

/** Fields the indexer adds from what the chain logs besides the event (infra/indexer/decode.ts); optional. */
const OBSERVED: Readonly<Record<string, Record<string, JsonSchema>>> = {
  PaymentRecord: {
    fee_split: {
      type: 'object',
      description: 'What execute_payment logged it moved (`Payment executed: …`), base units: the recipient\'s amount (the whole amount in net mode), the gateway fee account\'s residual, the scheduler cut paid to a permissionless caller (0 when the gateway signer called) and the protocol cut. Absent when the program logged none (transfer).',
      required: ['recipient_amount', 'gateway_residual', 'scheduler_cut', 'protocol_cut'],
      properties: { recipient_amount: amount, gateway_residual: amount, scheduler_cut: amount, protocol_cut: amount },
    },
  },
};

function definedSchema(name: string): JsonSchema {
  const def = idlType(name);
  if (def.type.kind === 'struct') {
    const s = fieldsSchema(def.type.fields ?? []);
    return { type: 'object', properties: { ...s.properties, ...OBSERVED[name] }, required: s.required };
  }
  const variants = def.type.variants.map((v): JsonSchema => {
    const fields = v.fields ?? [];
    if (fields.length === 0) return { type: 'string', enum: [v.name] };
    const kind = { type: 'string', enum: [v.name] };
    const first = fields[0];
    if (typeof first === 'object' && 'name' in first && 'type' in first) {
      const s = fieldsSchema(fields as IdlField[]);
      return { type: 'object', properties: { kind, ...s.properties }, required: ['kind', ...s.required] };
    }
    return { type: 'object', properties: { kind, value: typeSchema(first as IdlTypeRef) }, required: ['kind', 'value'] };
  });
  return { description: `${name}: a unit variant as its name, a variant with fields as {kind, ...fields}`, oneOf: variants };
}

/** The schema of an event kind's `data`, as the codec produces it. */
export function eventDataSchema(name: EventName): JsonSchema {
  return { ...definedSchema(name), description: `fields of ${name} (IDL field names)` };
}

const envelopeProperties = {
  id: { type: 'string', description: 'stable identity: <signature>:<instruction path>:<index>' },
  signature: signatureSchema,
  slot: { type: 'integer', minimum: 0 },
  blockTime: { type: 'integer', nullable: true, description: 'block time, unix seconds; null when the cluster reported none' },
  timestamp: { type: 'string', format: 'date-time', nullable: true, description: 'the block time as ISO 8601 (UTC); null when unknown' },
  ixPath: { type: 'string', description: 'instruction path: "3" top-level instruction 3, "3.1" its inner instruction 1' },
  index: { type: 'integer', minimum: 0, description: 'index of the event among the events of its transaction, in log order' },
};
const required = ['id', 'name', 'signature', 'slot', 'blockTime', 'timestamp', 'ixPath', 'index', 'data'];

/** An event of one kind, its data fully typed. */
export function typedEventSchema(name: EventName): JsonSchema {
  return {
    type: 'object',
    required,
    properties: { ...envelopeProperties, name: { type: 'string', enum: [name] }, data: eventDataSchema(name) },
  };
}

/** Any event: `data` holds the fields of the kind named by `name` (see the typed endpoints). */
export const apiEventSchema: JsonSchema = {
  type: 'object',
  description: 'An archived program event. `data` keeps the IDL field names: pubkeys base58, u64/i64 decimal strings, memos UTF-8 (+ memo_hex), enums as variant name or {kind, ...fields}.',
  required,
  properties: {
    ...envelopeProperties,
    name: { type: 'string', enum: [...EVENT_NAMES], description: 'canonical IDL event name' },
    data: { type: 'object', additionalProperties: true },
  },
};

export const apiEventListSchema: JsonSchema = { type: 'array', items: apiEventSchema };
export const typedEventListSchema = (name: EventName): JsonSchema => ({ type: 'array', items: typedEventSchema(name) });
/** Any kind, each typed: for /v1/events/typed/{eventName}. */
export const anyTypedEventListSchema: JsonSchema = { type: 'array', items: { oneOf: EVENT_NAMES.map(typedEventSchema) } };
