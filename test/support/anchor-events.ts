/**
 * Realistic, seeded Tributary events for tests, encoded by an independent encoder
 * (Anchor's own BorshCoder, with the IDL's discriminators) into the base64 payload of a
 * `Program data:` log line, then decoded back through our codec into the envelope the
 * indexer would append. Tests can therefore feed the spine before the indexer exists, and
 * the codec is checked against Anchor on every event built.
 *
 * Values and overrides use the API's JSON form (DESIGN.md): pubkeys base58, u64/i64 as
 * decimal strings (bigint and number accepted), text fields as strings (raw bytes accepted
 * as number[]/Uint8Array), enums as "Active" | {kind, ...fields} | {kind, value}.
 */
import { BorshCoder } from '@coral-xyz/anchor';
import { PublicKey } from '@solana/web3.js';
import BN from 'bn.js';
import bs58 from 'bs58';
import { idl, idlEvents, idlType, type IdlField, type IdlTypeRef } from '../../src/kernel/idl/index.js';
import { EVENT_NAMES, type EventName } from '../../src/kernel/events/catalog.js';
import { decodeEventPayload, textToFixedBytes, type EventData } from '../../src/kernel/events/codec.js';
import { eventId, serializeEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { appendEvents, appendRaw } from '../../infra/redis/event-stream.js';
import { createPrng, type Prng } from '../../infra/localnet/prng.js';
import type { Redis } from 'ioredis';
import type { StreamKeys } from '../../infra/redis/client.js';

export type Plain = unknown;
export type Overrides = Record<string, Plain>;

export const U64_MAX = 18446744073709551615n;
export const I64_MIN = -9223372036854775808n;
export const I64_MAX = 9223372036854775807n;
/** 2024-01-01T00:00:00Z: block times of generated events start here */
export const BASE_TIME = 1_704_067_200;

const coder = new BorshCoder(idl);
const TEXT_FIELDS = new Set(['memo', 'name', 'url', 'referral_code']);
const isPadding = (name: string): boolean => /^_?padding/.test(name) || name.startsWith('_');
const discriminators = new Map(idlEvents.map((e) => [e.name, Buffer.from(e.discriminator)]));

// ---- random values in the plain (API JSON) form --------------------------------------

export function randomPubkey(rng: Prng): string {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) bytes[i] = rng.int(256);
  return new PublicKey(bytes).toBase58();
}

/** A valid-looking transaction signature: 64 random bytes whose base58 is 88 characters. */
export function randomSignature(rng: Prng): string {
  const bytes = new Uint8Array(64);
  bytes[0] = 0xd0 + rng.int(0x30); // a high first byte gives the full 88 characters
  for (let i = 1; i < 64; i += 1) bytes[i] = rng.int(256);
  return bs58.encode(bytes);
}

function randomU64(rng: Prng): string {
  const r = rng.next();
  if (r < 0.05) return '0';
  if (r < 0.1) return U64_MAX.toString();
  if (r < 0.2) return (U64_MAX - BigInt(rng.int(1_000_000))).toString();
  return String(rng.between(1, 1_000_000_000));
}

function randomI64(rng: Prng, field: string): string {
  const r = rng.next();
  if (r < 0.05) return I64_MIN.toString();
  if (r < 0.1) return I64_MAX.toString();
  if (r < 0.2) return String(-rng.between(1, 2_000_000_000));
  // time-like fields stay realistic most of the time
  return field === 'timestamp' || field.endsWith('_date') || field.endsWith('_at') || field.includes('time')
    ? String(BASE_TIME + rng.int(86_400 * 365))
    : String(rng.between(0, 1_000_000));
}

const WORDS = ['order', 'sub', 'plan', 'invoice', 'ünïcode', 'café', '支払い', 'x', 'track'];

/** A memo text: empty, short (trailing NULs on chain) or exactly filling the bytes (no NUL). */
function randomText(rng: Prng, size: number): string {
  const r = rng.next();
  if (r < 0.1) return '';
  if (r < 0.25) return 'm'.repeat(size); // full length: no NUL at all
  let s = `${rng.pick(WORDS)}-${rng.int(1_000_000)}`;
  while (Buffer.byteLength(s, 'utf8') > size) s = s.slice(0, -1);
  return s;
}

function randomInt(rng: Prng, type: string, field: string): number {
  if (field.endsWith('_bps')) return rng.int(10_001);
  const bits = Number(type.slice(1));
  const max = bits >= 32 ? 0xffffffff : 2 ** bits - 1;
  if (type.startsWith('i')) return rng.int(2 ** (bits - 1)) - 2 ** (bits - 2);
  return rng.chance(0.05) ? max : rng.int(Math.min(max, 100_000) + 1);
}

function randomValue(type: IdlTypeRef, rng: Prng, field: string): Plain {
  if (typeof type === 'string') {
    if (type === 'pubkey') return randomPubkey(rng);
    if (type === 'bool') return rng.chance(0.5);
    if (type === 'u64' || type === 'u128') return randomU64(rng);
    if (type === 'i64' || type === 'i128') return randomI64(rng, field);
    if (type === 'bytes') return Array.from({ length: rng.int(8) }, () => rng.int(256));
    return randomInt(rng, type, field);
  }
  if ('option' in type) return rng.chance(0.35) ? null : randomValue(type.option, rng, field);
  if ('vec' in type) return Array.from({ length: rng.int(3) }, () => randomValue(type.vec, rng, field));
  if ('array' in type) {
    const [inner, size] = type.array;
    if (inner === 'u8' && TEXT_FIELDS.has(field)) return randomText(rng, size);
    return Array.from({ length: size }, () => randomValue(inner, rng, field));
  }
  return randomDefined(type.defined.name, rng);
}

function randomFields(fields: readonly IdlField[], rng: Prng): Record<string, Plain> {
  const out: Record<string, Plain> = {};
  for (const f of fields) if (!isPadding(f.name)) out[f.name] = randomValue(f.type, rng, f.name);
  return out;
}

function randomDefined(name: string, rng: Prng): Plain {
  const def = idlType(name);
  if (def.type.kind === 'struct') return randomFields(def.type.fields ?? [], rng);
  const variant = rng.pick(def.type.variants);
  const fields = variant.fields ?? [];
  if (fields.length === 0) return variant.name;
  if (isNamed(fields[0])) return { kind: variant.name, ...randomFields(fields as IdlField[], rng) };
  const values = fields.map((t) => randomValue(t as IdlTypeRef, rng, ''));
  return values.length === 1 ? { kind: variant.name, value: values[0] } : { kind: variant.name, values };
}

function isNamed(f: unknown): f is IdlField {
  return typeof f === 'object' && f !== null && 'name' in f && 'type' in f;
}

// ---- plain form → the values BorshCoder encodes ----------------------------------------

function toBytes(v: Plain, size: number, field: string): number[] {
  if (typeof v === 'string') {
    const b = textToFixedBytes(v, size);
    if (!b) throw new Error(`${field}: text longer than ${size} bytes`);
    return [...b];
  }
  const raw = Array.from(v as ArrayLike<number>);
  if (raw.length > size) throw new Error(`${field}: more than ${size} bytes`);
  return [...raw, ...new Array<number>(size - raw.length).fill(0)];
}

function toAnchor(type: IdlTypeRef, v: Plain, field: string): unknown {
  if (typeof type === 'string') {
    if (type === 'pubkey') return new PublicKey(v as string);
    if (['u64', 'i64', 'u128', 'i128'].includes(type)) return new BN(String(v), 10);
    if (type === 'bytes') return Buffer.from(v as number[]);
    return v;
  }
  if ('option' in type) return v === null || v === undefined ? null : toAnchor(type.option, v, field);
  if ('vec' in type) return (v as Plain[]).map((x) => toAnchor(type.vec, x, field));
  if ('array' in type) {
    const [inner, size] = type.array;
    if (inner === 'u8') return toBytes(v ?? [], size, field);
    return (v as Plain[]).map((x) => toAnchor(inner, x, field));
  }
  return definedToAnchor(type.defined.name, v);
}

function fieldsToAnchor(fields: readonly IdlField[], v: Record<string, Plain>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (isPadding(f.name) && v[f.name] === undefined) out[f.name] = toAnchor(f.type, zeroOf(f.type), f.name);
    else if (v[f.name] === undefined) throw new Error(`missing field ${f.name}`);
    else out[f.name] = toAnchor(f.type, v[f.name], f.name);
  }
  return out;
}

function zeroOf(type: IdlTypeRef): Plain {
  if (typeof type === 'object' && 'array' in type) return Array.from({ length: type.array[1] }, () => zeroOf(type.array[0]));
  return 0;
}

function definedToAnchor(name: string, v: Plain): unknown {
  const def = idlType(name);
  if (def.type.kind === 'struct') return fieldsToAnchor(def.type.fields ?? [], v as Record<string, Plain>);
  const { kind, ...rest } = typeof v === 'string' ? { kind: v } : (v as { kind: string } & Record<string, Plain>);
  const variant = def.type.variants.find((x) => x.name === kind);
  if (!variant) throw new Error(`${name} has no variant ${String(kind)}`);
  const fields = variant.fields ?? [];
  if (fields.length === 0) return { [kind]: {} };
  if (isNamed(fields[0])) return { [kind]: fieldsToAnchor(fields as IdlField[], rest) };
  const values = fields.length === 1 ? [rest['value']] : (rest['values'] as Plain[]);
  return { [kind]: Object.fromEntries(fields.map((t, i) => [String(i), toAnchor(t as IdlTypeRef, values[i], kind)])) };
}

// ---- payloads and envelopes -------------------------------------------------------------

/** Random fields of an event in the plain form, with overrides laid over them. */
export function eventFields(name: EventName, overrides: Overrides = {}, seed: string | number = 1): Record<string, Plain> {
  const def = idlType(name);
  if (def.type.kind !== 'struct') throw new Error(`${name} is not a struct`);
  return { ...randomFields(def.type.fields ?? [], createPrng(`fields:${name}:${seed}`)), ...overrides };
}

/** Encodes an event with Anchor's BorshCoder: discriminator + borsh, as base64 (`Program data:`). */
export function encodeEventPayload(name: EventName, fields: Record<string, Plain>): string {
  const disc = discriminators.get(name);
  if (!disc) throw new Error(`IDL has no event ${name}`);
  const body = coder.types.encode(name, definedToAnchor(name, fields));
  return Buffer.concat([disc, body]).toString('base64');
}

export interface Identity {
  signature?: string;
  slot?: number;
  blockTime?: number | null;
  ixPath?: string;
  index?: number;
}

/**
 * One event, through Anchor's encoder and our decoder. `seed` fixes the random fields and
 * the identity; pass an Identity to choose signature, slot, blockTime, ixPath, index.
 */
export function makeEvent<N extends EventName>(name: N, overrides: Overrides = {}, seed: string | number | (Identity & { seed?: string | number }) = 1): TributaryEvent<N> {
  const opts = typeof seed === 'object' ? seed : { seed };
  const s = opts.seed ?? 1;
  const rng = createPrng(`identity:${name}:${s}`);
  const payload = encodeEventPayload(name, eventFields(name, overrides, s));
  const decoded = decodeEventPayload(payload);
  if (!decoded || decoded.name !== name) throw new Error(`codec could not decode an Anchor-encoded ${name}`);
  const signature = opts.signature ?? randomSignature(rng);
  const slot = opts.slot ?? 100_000 + rng.int(1_000_000);
  const ixPath = opts.ixPath ?? String(rng.int(4));
  const index = opts.index ?? 0;
  const blockTime = opts.blockTime === undefined ? BASE_TIME + Math.floor(slot * 0.4) : opts.blockTime;
  return { id: eventId(signature, ixPath, index), signature, slot, blockTime, ixPath, index, ...decoded } as TributaryEvent<N>;
}

export interface MakeEventsOptions {
  seed?: string | number;
  /** kinds to draw from (default all 19); every kind appears when count ≥ kinds.length */
  kinds?: readonly EventName[];
  /** fraction of extra entries that repeat an earlier event verbatim (default 0) */
  duplicates?: number;
  /** first slot (default 1000); slots increase, several events may share a transaction */
  startSlot?: number;
  /** fraction of transactions without a block time (default 0) */
  nullBlockTime?: number;
  /** fields set on every event of a kind, e.g. {PaymentRecord: {gateway}} */
  overrides?: Partial<Record<EventName, Overrides>>;
}

/**
 * `count` distinct events (then duplicates appended at random later positions), in stream
 * order: slots increase; a transaction carries 1–3 events with indexes 0.. in log order.
 */
export function makeEvents(count: number, opts: MakeEventsOptions = {}): TributaryEvent[] {
  const seed = opts.seed ?? 1;
  const kinds = opts.kinds ?? EVENT_NAMES;
  const rng = createPrng(`events:${seed}`);
  const out: TributaryEvent[] = [];
  let slot = opts.startSlot ?? 1000;
  while (out.length < count) {
    slot += 1 + rng.int(3);
    const signature = randomSignature(rng);
    const blockTime = rng.chance(opts.nullBlockTime ?? 0) ? null : BASE_TIME + Math.floor(slot * 0.4);
    const n = Math.min(count - out.length, 1 + rng.int(3));
    for (let index = 0; index < n; index += 1) {
      // cycle through kinds first so every kind is present, then draw at random
      const name = out.length < kinds.length ? (kinds[out.length] as EventName) : rng.pick(kinds);
      const timeOverride = blockTime !== null && rng.chance(0.8) ? { timestamp: String(blockTime) } : {};
      const hasTimestamp = (idlType(name).type as { fields?: IdlField[] }).fields?.some((f) => f.name === 'timestamp');
      const ov = { ...(hasTimestamp ? timeOverride : {}), ...(opts.overrides?.[name] ?? {}) };
      out.push(makeEvent(name, ov, { seed: `${seed}:${out.length}`, signature, slot, blockTime, ixPath: String(index), index }));
    }
  }
  const dupCount = Math.round(count * (opts.duplicates ?? 0));
  for (let i = 0; i < dupCount; i += 1) {
    const at = rng.int(out.length + 1);
    const from = rng.int(Math.max(1, at));
    const dup = out[Math.min(from, out.length - 1)];
    if (dup) out.splice(at, 0, dup);
  }
  return out;
}

/** The distinct events of a list (first occurrence wins), e.g. what the archive should hold. */
export function uniqueEvents(events: readonly TributaryEvent[]): TributaryEvent[] {
  const seen = new Map<string, TributaryEvent>();
  for (const e of events) if (!seen.has(e.id)) seen.set(e.id, e);
  return [...seen.values()];
}

/** The 64-byte (payment policies) or 32-byte (composable policies) memo bytes of a tracking id. */
export function trackingIdMemo(trackingId: string, size: 64 | 32 = 64): number[] {
  const b = textToFixedBytes(trackingId, size);
  if (!b) throw new Error(`tracking id longer than ${size} bytes`);
  return [...b];
}

/**
 * Appends events to the test's stream. `raw` (the default) writes every entry, duplicates
 * included, so consumers' own deduplication is exercised; `dedup` drops repeated
 * identities first, then appends through appendEvents. Returns the number of entries written.
 */
export async function appendTestEvents(
  env: { redis: Redis; keys: StreamKeys },
  events: readonly TributaryEvent[],
  opts: { via?: 'raw' | 'dedup'; chunk?: number } = {},
): Promise<number> {
  const chunk = opts.chunk ?? 500;
  const list = (opts.via ?? 'raw') === 'raw' ? events : uniqueEvents(events);
  let written = 0;
  for (let i = 0; i < list.length; i += chunk) {
    const part = list.slice(i, i + chunk);
    if ((opts.via ?? 'raw') === 'raw') {
      await appendRaw(env.redis, env.keys, part.map(serializeEvent));
      written += part.length;
    } else {
      written += await appendEvents(env.redis, env.keys, part);
    }
  }
  return written;
}

/** An event's data read by field name, for tests that look at events of any kind. */
export function dataOf(e: { data: unknown } | undefined): EventData {
  return (e?.data ?? {}) as EventData;
}
