/**
 * The event codec: turns an event's Borsh bytes (borsh-reader.ts; Anchor's BorshCoder is
 * the reference, and decodes accounts) into the JSON form that the
 * stream, the archive and every API carry (DESIGN.md, "Encoding of fields"):
 *   - public keys as base58 strings;
 *   - u64, i64, u128, i128 as decimal strings (JSON numbers lose precision past 2^53);
 *   - smaller integers as numbers;
 *   - text byte arrays (memo, name, url, referral_code) as UTF-8 with trailing NULs
 *     stripped (a NUL inside becomes U+FFFD); memos also keep their raw bytes as `<field>_hex`;
 *   - unit enum variants as their name; variants with fields as `{kind, ...fields}`,
 *     a single tuple field as `{kind, value}`;
 *   - Option as the value or null; padding fields dropped.
 */
import { BorshCoder } from '@coral-xyz/anchor';
import { idl, idlType, type IdlField, type IdlTypeRef } from '../idl/index.js';
import { isEventName } from './catalog.js';
import { isPadding, RAW_KEPT, TEXT_FIELDS, WIDE_INTS } from './json-rules.js';
import type { DecodedEvent } from './envelope.js';
import { fixedBytesToText, readEventBytes, readEventPayload } from './borsh-reader.js';
import type { EventData, Json } from './json-value.js';

export type { EventData, Json } from './json-value.js';


export function bytesToText(bytes: ArrayLike<number>): string {
  // A NUL inside the text cannot travel in JSON stored as jsonb; the raw bytes stay in <field>_hex.
  return fixedBytesToText(bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes));
}

/** Encodes a text as its zero-padded fixed-size memo (the program's encoding); undefined if too long. */
export function textToFixedBytes(text: string, size: number): Buffer | undefined {
  const raw = Buffer.from(text, 'utf8');
  if (raw.length > size) return undefined;
  const out = Buffer.alloc(size);
  raw.copy(out);
  return out;
}

interface Stringable { toString(radix?: number): string }

function normalizeValue(type: IdlTypeRef, value: unknown): Json {
  if (typeof type === 'string') {
    if (type === 'pubkey') return (value as { toBase58(): string }).toBase58();
    if (WIDE_INTS.has(type)) return (value as Stringable).toString(10);
    if (type === 'bytes') return Buffer.from(value as Uint8Array).toString('hex');
    return value as Json;
  }
  if ('option' in type) return value === null || value === undefined ? null : normalizeValue(type.option, value);
  if ('array' in type) return (value as unknown[]).map((v) => normalizeValue(type.array[0], v));
  if ('vec' in type) return (value as unknown[]).map((v) => normalizeValue(type.vec, v));
  return normalizeDefined(type.defined.name, value);
}

function normalizeFields(fields: readonly IdlField[], value: Record<string, unknown>): EventData {
  const out: EventData = {};
  for (const f of fields) {
    if (isPadding(f.name)) continue;
    const v = value[f.name];
    const isByteArray = typeof f.type === 'object' && 'array' in f.type && f.type.array[0] === 'u8';
    if (isByteArray && TEXT_FIELDS.has(f.name)) {
      const bytes = v as number[];
      out[f.name] = bytesToText(bytes);
      if (RAW_KEPT.has(f.name)) out[`${f.name}_hex`] = Buffer.from(bytes).toString('hex');
    } else {
      out[f.name] = normalizeValue(f.type, v);
    }
  }
  return out;
}

function normalizeDefined(name: string, value: unknown): Json {
  const def = idlType(name);
  if (def.type.kind === 'struct') return normalizeFields(def.type.fields ?? [], value as Record<string, unknown>);
  const [kind, inner] = Object.entries(value as Record<string, unknown>)[0] ?? [];
  const variant = def.type.variants.find((v) => v.name === kind);
  if (!variant || kind === undefined) throw new Error(`bad enum value for ${name}`);
  const fields = variant.fields ?? [];
  if (fields.length === 0) return kind;
  const first = fields[0];
  if (typeof first === 'object' && first !== null && 'name' in first && typeof first.name === 'string' && 'type' in first) {
    return { kind, ...normalizeFields(fields as IdlField[], inner as Record<string, unknown>) };
  }
  const tuple = fields.map((t, i) => normalizeValue(t as IdlTypeRef, (inner as Record<string, unknown>)[i]));
  return tuple.length === 1 ? { kind, value: tuple[0] ?? null } : { kind, values: tuple };
}

/** Normalizes one decoded value of a named IDL type (an event, an account, a struct). */
export function normalizeIdlValue(typeName: string, decoded: unknown): EventData {
  return normalizeDefined(typeName, decoded) as EventData;
}

const coder = new BorshCoder(idl);

/**
 * Decodes one `Program data:` payload (base64, discriminator first) into a canonical
 * name and normalized fields; undefined for an unknown discriminator or a payload that
 * does not parse. Never throws: the caller counts and logs what it cannot decode. Read
 * straight from the bytes (borsh-reader.ts); decodeEventPayloadWithAnchor is the same
 * through Anchor's coder, the reference it is tested against.
 */
export function decodeEventPayload(base64: string): DecodedEvent | undefined {
  const decoded = readEventPayload(base64);
  if (!decoded || !isEventName(decoded.name)) return undefined;
  // the generated types (event-types.ts) follow the same IDL with the same rules as normalizeIdlValue
  return decoded as unknown as DecodedEvent;
}

/** decodeEventPayload of an event's bytes (discriminator first) from `start`, as a self-CPI carries them after its tag. */
export function decodeEventBytes(buf: Buffer, start = 0): DecodedEvent | undefined {
  const decoded = readEventBytes(buf, start);
  if (!decoded || !isEventName(decoded.name)) return undefined;
  return decoded as unknown as DecodedEvent;
}

export function decodeEventPayloadWithAnchor(base64: string): DecodedEvent | undefined {
  let decoded: { name: string; data: unknown } | null;
  try {
    decoded = coder.events.decode(base64);
  } catch {
    return undefined;
  }
  if (!decoded || !isEventName(decoded.name)) return undefined;
  return { name: decoded.name, data: normalizeIdlValue(decoded.name, decoded.data) } as unknown as DecodedEvent;
}

/** Decodes an account's data (discriminator first) by its IDL account name. */
export function decodeAccount(accountName: string, data: Buffer): EventData {
  return normalizeIdlValue(accountName, coder.accounts.decode(accountName, data));
}
