/**
 * Independence of the codec: events encoded by Anchor's own BorshCoder (types coder and
 * the IDL's discriminators) decode through decodeEventPayload to the values a client
 * expects, for every event of the IDL and the edge values: u64 max, negative i64,
 * Option None and Some, enum variants with fields (PaymentFrequency::Custom), and
 * 64-byte memos with and without NULs.
 */
import { expect } from 'chai';
import { BorshCoder } from '@coral-xyz/anchor';
import { PublicKey } from '@solana/web3.js';
import BN from 'bn.js';
import { decodeEventPayload } from '../../src/kernel/events/codec.js';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import { idl, idlEvents, idlType, type IdlField, type IdlTypeRef } from '../../src/kernel/idl/index.js';
import { dataOf } from '../support/anchor-events.js';

const coder = new BorshCoder(idl);
const U64_MAX = '18446744073709551615';
const I64_MIN = '-9223372036854775808';
type Plain = unknown;

function encode(name: string, value: unknown): string {
  const disc = Buffer.from(idlEvents.find((e) => e.name === name)!.discriminator);
  return Buffer.concat([disc, coder.types.encode(name, value)]).toString('base64');
}

/** Builds one value as Anchor takes it and as the codec must return it; `v` varies choices. */
function sample(type: IdlTypeRef, field: string, v: number): { anchor: unknown; plain: Plain } {
  if (typeof type === 'string') {
    switch (type) {
      case 'pubkey': {
        const k = new PublicKey(Buffer.alloc(32, (field.length * 7 + v) % 250 + 1));
        return { anchor: k, plain: k.toBase58() };
      }
      case 'u64': return v % 2 === 0 ? { anchor: new BN(U64_MAX), plain: U64_MAX } : { anchor: new BN(42), plain: '42' };
      case 'i64': return v % 2 === 0 ? { anchor: new BN(I64_MIN), plain: I64_MIN } : { anchor: new BN(-1_700_000_000), plain: '-1700000000' };
      case 'u32': return { anchor: 4_294_967_295, plain: 4_294_967_295 };
      case 'u16': return { anchor: 65_535, plain: 65_535 };
      case 'u8': return { anchor: 255, plain: 255 };
      case 'bool': return { anchor: v % 2 === 0, plain: v % 2 === 0 };
      case 'bytes': return { anchor: Buffer.from([1, 2, 3]), plain: '010203' };
      default: throw new Error(`no sample for ${type}`);
    }
  }
  if ('option' in type) {
    if (v % 2 === 0) return { anchor: null, plain: null };
    return sample(type.option, field, v);
  }
  if ('vec' in type) {
    const one = sample(type.vec, field, v);
    return { anchor: [one.anchor], plain: [one.plain] };
  }
  if ('array' in type) {
    const [inner, len] = type.array;
    const items = Array.from({ length: len }, (_, i) => sample(inner, field, v + i));
    return { anchor: items.map((i) => i.anchor), plain: items.map((i) => i.plain) };
  }
  return sampleDefined(type.defined.name, v);
}

const TEXT = new Set(['memo', 'name', 'url', 'referral_code']);

function sampleFields(fields: readonly IdlField[], v: number): { anchor: Record<string, unknown>; plain: Record<string, Plain> } {
  const anchor: Record<string, unknown> = {};
  const plain: Record<string, Plain> = {};
  for (const f of fields) {
    const isBytes = typeof f.type === 'object' && 'array' in f.type && f.type.array[0] === 'u8';
    if (isBytes && (f.name.startsWith('padding') || f.name.startsWith('_'))) {
      anchor[f.name] = new Array((f.type as { array: [string, number] }).array[1]).fill(0);
      continue;
    }
    if (isBytes && TEXT.has(f.name)) {
      const size = (f.type as { array: [string, number] }).array[1];
      // even: short text padded with NULs; odd: every byte used, no NUL at all
      const text = v % 2 === 0 ? 'trk-édge-1' : 'm'.repeat(size);
      const raw = Buffer.alloc(size);
      Buffer.from(text, 'utf8').copy(raw);
      anchor[f.name] = [...raw];
      plain[f.name] = text;
      if (f.name === 'memo') plain['memo_hex'] = raw.toString('hex');
      continue;
    }
    const s = sample(f.type, f.name, v);
    anchor[f.name] = s.anchor;
    plain[f.name] = s.plain;
  }
  return { anchor, plain };
}

function sampleDefined(name: string, v: number): { anchor: unknown; plain: Plain } {
  const def = idlType(name);
  if (def.type.kind === 'struct') return sampleFields(def.type.fields ?? [], v);
  const variant = def.type.variants[v % def.type.variants.length]!;
  const fields = variant.fields ?? [];
  if (fields.length === 0) return { anchor: { [variant.name]: {} }, plain: variant.name };
  const first = fields[0];
  if (typeof first === 'object' && 'name' in first) {
    const s = sampleFields(fields as IdlField[], v);
    return { anchor: { [variant.name]: s.anchor }, plain: { kind: variant.name, ...s.plain } };
  }
  const s = sample(first as IdlTypeRef, variant.name, v + 1);
  return { anchor: { [variant.name]: { 0: s.anchor } }, plain: { kind: variant.name, value: s.plain } };
}

describe('event codec against Anchor BorshCoder', () => {
  for (const name of EVENT_NAMES) {
    it(`decodes ${name} as encoded by Anchor, in every variant`, () => {
      for (let v = 0; v < 7; v += 1) {
        const s = sampleDefined(name, v);
        const decoded = decodeEventPayload(encode(name, s.anchor));
        expect(decoded?.name).to.equal(name);
        expect(decoded?.data, `variant ${v}`).to.deep.equal(s.plain);
      }
    });
  }

  it('keeps u64 max, negative i64, Custom frequencies and NUL-free 64-byte memos exact', () => {
    const memo = Buffer.alloc(64, 0x41);
    const payload = encode('PaymentPolicyCreated', {
      user_payment: PublicKey.default, recipient: PublicKey.default, gateway: PublicKey.default, policy_id: 7,
      policy_type: {
        Subscription: {
          amount: new BN(U64_MAX), auto_renew: false, max_renewals: 12, payment_frequency: { Custom: { 0: new BN(3_600) } },
          next_payment_due: new BN(-5), padding: new Array(97).fill(0),
        },
      },
      memo: [...memo], created_policies_count: 6,
    });
    const decoded = decodeEventPayload(payload);
    expect(dataOf(decoded)['policy_type']).to.deep.equal({
      kind: 'Subscription', amount: U64_MAX, auto_renew: false, max_renewals: 12,
      payment_frequency: { kind: 'Custom', value: '3600' }, next_payment_due: '-5',
    });
    expect(dataOf(decoded)['memo']).to.equal('A'.repeat(64));
    expect(dataOf(decoded)['memo_hex']).to.equal(memo.toString('hex'));
    expect(dataOf(decoded)['created_policies_count']).to.equal(6);
  });

  it('decodes Option None and Some inside arrays (referral rewards)', () => {
    const k = new PublicKey(Buffer.alloc(32, 9));
    const decoded = decodeEventPayload(encode('ReferralRewardDistributedRecord', {
      payment_policy: k, gateway: k, payment_amount: new BN(10), timestamp: new BN(1),
      rewards: [{ pubkey: k, reward: new BN(U64_MAX) }, null, null],
    }));
    expect(dataOf(decoded)['rewards']).to.deep.equal([{ pubkey: k.toBase58(), reward: U64_MAX }, null, null]);
  });

  it('returns undefined for an unknown discriminator instead of throwing', () => {
    expect(decodeEventPayload(Buffer.alloc(40, 1).toString('base64'))).to.equal(undefined);
  });
});
