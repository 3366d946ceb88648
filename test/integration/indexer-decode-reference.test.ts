/**
 * The indexer's compiled event reader against a plain reference reader
 * (test/support/decode-reference.ts), over events of every type in the IDL encoded by
 * Anchor's coder: edge values (u64 and i64 at their limits, zero keys and all-0xff keys,
 * empty byte strings and texts, every Option none and some, every enum variant, texts
 * empty, full, multi-byte and with an inner NUL) and random ones, each also with bytes
 * changed and cut short; and the same events read through a whole transaction, from a
 * `Program data:` line and from a self-CPI. The writers that give the same fields straight
 * as JSON text (what the indexer appends) are held to JSON.stringify of the reader's
 * result on every one of these byte strings.
 */
import { expect } from 'chai';
import bs58 from 'bs58';
import { idlType, PROGRAM_ID, type IdlField, type IdlTypeRef } from '../../src/kernel/idl/index.js';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import { writeEventJson } from '../../src/kernel/events/borsh-json-writer.js';
import { decodeEventBytes } from '../../src/kernel/events/codec.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import { decodeTransaction, EVENT_IX_TAG, serializeTransaction } from '../../infra/indexer/decode.js';
import { createPrng } from '../../infra/localnet/prng.js';
import type { TransactionJson } from '../../infra/solana/chain-reader.js';
import { encodeEventPayload, eventFields, I64_MAX, I64_MIN, U64_MAX, type Plain } from '../support/anchor-events.js';
import { referenceDecode } from '../support/decode-reference.js';

type Edge = 'low' | 'high';
const TEXT = new Set(['memo', 'name', 'url', 'referral_code']);
const isNamed = (f: unknown): f is IdlField => typeof f === 'object' && f !== null && 'name' in f && 'type' in f;
const LIMITS: Record<string, [Plain, Plain]> = {
  u8: [0, 255], u16: [0, 65_535], u32: [0, 4_294_967_295], i8: [-128, 127], i16: [-32_768, 32_767], i32: [-2_147_483_648, 2_147_483_647],
  u64: ['0', U64_MAX.toString()], i64: [I64_MIN.toString(), I64_MAX.toString()], u128: ['0', U64_MAX.toString()], i128: ['0', I64_MAX.toString()],
};

/** A text filling `size` bytes: ASCII, multi-byte UTF-8, or raw bytes with a NUL inside. */
function edgeText(edge: Edge, size: number, variant: number): Plain {
  if (edge === 'low') return '';
  if (variant % 3 === 0) return 'm'.repeat(size);
  if (variant % 3 === 1) return 'ü'.repeat(Math.floor(size / 2)) + 'x'.repeat(size % 2);
  return [0x61, 0x00, 0x62];
}

/** Values at one end of every type; `variant` picks the enum variants (every one over enough calls). */
function edgeValue(type: IdlTypeRef, edge: Edge, variant: number, field: string): Plain {
  if (typeof type === 'string') {
    if (type === 'pubkey') return bs58.encode(Buffer.alloc(32, edge === 'low' ? 0 : 0xff));
    if (type === 'bool') return edge === 'high';
    if (type === 'bytes') return edge === 'low' ? [] : [0, 1, 0xff];
    // every other variant, the first integers a double cannot hold
    if (edge === 'high' && variant % 2 === 1 && (type === 'u64' || type === 'i64') && !field.endsWith('_bps')) return type === 'u64' ? '9007199254740993' : '-9007199254740993';
    const limits = LIMITS[type];
    if (!limits) throw new Error(`no edge values for ${type}`);
    return field.endsWith('_bps') ? (edge === 'low' ? 0 : 10_000) : limits[edge === 'low' ? 0 : 1];
  }
  if ('option' in type) return edge === 'low' ? null : edgeValue(type.option, edge, variant, field);
  if ('vec' in type) return edge === 'low' ? [] : [0, 1, 2].map((i) => edgeValue(type.vec, edge, variant + i, field));
  if ('array' in type) {
    const [inner, size] = type.array;
    if (inner === 'u8' && TEXT.has(field)) return edgeText(edge, size, variant);
    return Array.from({ length: size }, (_, i) => edgeValue(inner, i % 2 === 0 ? edge : edge === 'low' ? 'high' : 'low', variant + i, field));
  }
  const def = idlType(type.defined.name);
  if (def.type.kind === 'struct') return edgeFields(def.type.fields ?? [], edge, variant);
  const v = def.type.variants[variant % def.type.variants.length]!;
  const fields = v.fields ?? [];
  if (fields.length === 0) return v.name;
  if (isNamed(fields[0])) return { kind: v.name, ...edgeFields(fields as IdlField[], edge, variant) };
  const values = fields.map((t) => edgeValue(t as IdlTypeRef, edge, variant, ''));
  return values.length === 1 ? { kind: v.name, value: values[0] } : { kind: v.name, values };
}

function edgeFields(fields: readonly IdlField[], edge: Edge, variant: number): Record<string, Plain> {
  const out: Record<string, Plain> = {};
  for (const f of fields) if (!f.name.startsWith('_') && !f.name.startsWith('padding')) out[f.name] = edgeValue(f.type, edge, variant, f.name);
  return out;
}

/** Anchor-encoded payloads of one event: edge values over 8 variant choices, then 30 random. */
function payloads(name: (typeof EVENT_NAMES)[number]): Buffer[] {
  const def = idlType(name);
  if (def.type.kind !== 'struct') throw new Error(`${name} is not a struct`);
  const out: Buffer[] = [];
  for (let variant = 0; variant < 8; variant += 1) {
    for (const edge of ['low', 'high'] as const) out.push(Buffer.from(encodeEventPayload(name, edgeFields(def.type.fields ?? [], edge, variant)), 'base64'));
  }
  for (let seed = 0; seed < 30; seed += 1) out.push(Buffer.from(encodeEventPayload(name, eventFields(name, {}, `reference:${seed}`)), 'base64'));
  return out;
}

const text = (v: unknown): string => JSON.stringify(v);

/** The JSON writer of the bytes gives JSON.stringify of the reader's fields, and refuses what the reader refuses. */
function expectWriterAgrees(bytes: Buffer, start = 0): void {
  const read = decodeEventBytes(bytes, start);
  const written = writeEventJson(bytes, start);
  expect(written === undefined ? undefined : [written.name, written.json], bytes.toString('hex')).to.deep.equal(read === undefined ? undefined : [read.name, text(read.data)]);
}

function transaction(logged: Buffer, viaCpi: Buffer): TransactionJson {
  return {
    slot: 7, blockTime: 1_700_000_000,
    transaction: { signatures: ['sig'], message: { accountKeys: ['payer', PROGRAM_ID], instructions: [] } },
    meta: {
      err: null,
      logMessages: [`Program ${PROGRAM_ID} invoke [1]`, `Program data: ${logged.toString('base64')}`, `Program ${PROGRAM_ID} success`],
      innerInstructions: [{ index: 0, instructions: [{ programIdIndex: 1, accounts: [], data: bs58.encode(Buffer.concat([EVENT_IX_TAG, viaCpi])) }] }],
    },
  };
}

describe('indexer event reader against the reference reader', () => {
  for (const name of EVENT_NAMES) {
    it(`${name}: edge and random values, changed bytes, truncations, and through a transaction`, () => {
      const rng = createPrng(`decode-reference:${name}`);
      const all = payloads(name);
      let changedAgreed = 0;
      for (const bytes of all) {
        const expected = referenceDecode(bytes);
        expect(expected?.name).to.equal(name);
        expect(text(decodeEventBytes(bytes)), bytes.toString('hex')).to.equal(text(expected));
        // the same bytes at an offset in a larger buffer, as a self-CPI carries them
        expect(text(decodeEventBytes(Buffer.concat([EVENT_IX_TAG, bytes, Buffer.alloc(3)]), 8))).to.equal(text(expected));
        expectWriterAgrees(bytes);
        expectWriterAgrees(Buffer.concat([EVENT_IX_TAG, bytes, Buffer.alloc(3)]), 8);
        for (let k = 0; k < 10; k += 1) {
          const changed = Buffer.from(bytes);
          const at = 8 + rng.int(changed.length - 8);
          changed[at] = rng.int(3) === 0 ? rng.int(3) : rng.int(256);
          const ref = referenceDecode(changed);
          expect(text(decodeEventBytes(changed)), `byte ${at} = ${changed[at]}`).to.equal(text(ref));
          expectWriterAgrees(changed);
          if (ref !== undefined) changedAgreed += 1;
        }
        const cut = 8 + rng.int(bytes.length - 8);
        expect(decodeEventBytes(bytes.subarray(0, cut))).to.equal(undefined);
        expect(writeEventJson(bytes.subarray(0, cut))).to.equal(undefined);
      }
      expect(changedAgreed).to.be.greaterThan(all.length);

      const [low, high] = [all[0]!, all[1]!];
      const decoded = decodeTransaction(transaction(low, high), 'sig', PROGRAM_ID);
      expect(decoded.unknown).to.deep.equal([]);
      expect(decoded.events.map((e) => [e.id, text({ name: e.name, data: e.data })])).to.deep.equal([
        ['sig:0:0', text(referenceDecode(low))], ['sig:0.0:1', text(referenceDecode(high))],
      ]);
      expect(serializeTransaction(transaction(low, high), 'sig', PROGRAM_ID).events).to.deep.equal(decoded.events.map((e) => ({ id: e.id, payload: serializeEvent(e) })));
    });
  }

  // the IDL has no vec today (edgeValue covers one if it comes): empty values are byte strings and texts
  it('writes u64 max, i64 min and max, empty bytes and texts, and Options both ways as the reference does', () => {
    const seen = new Set<string>();
    for (const name of EVENT_NAMES) {
      for (const bytes of payloads(name).slice(0, 16)) {
        const t = text(decodeEventBytes(bytes));
        for (const mark of [`"${U64_MAX}"`, `"${I64_MIN}"`, `"${I64_MAX}"`, ':""', ':null', '\uFFFD']) if (t.includes(mark)) seen.add(mark);
      }
    }
    expect([...seen].sort()).to.deep.equal([`"${U64_MAX}"`, `"${I64_MIN}"`, `"${I64_MAX}"`, ':""', ':null', '\uFFFD'].sort());
  });
});
