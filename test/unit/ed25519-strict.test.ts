/** infra/crypto/ed25519.ts: RFC 8032 verification through node:crypto, small-order keys refused. */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import { Keypair } from '@solana/web3.js';
import { signDetached, verifyStrict, weakPublicKey } from '../../infra/crypto/ed25519.js';

const IDENTITY_SIGNATURE = Uint8Array.from([1, ...new Array<number>(63).fill(0)]);
/** The encodings of small-order points: the identity, the all-zero key (order 4), the point of order 2. */
const SMALL_ORDER = [
  new Uint8Array(32),
  Uint8Array.from([1, ...new Array<number>(31).fill(0)]),
  Uint8Array.from([0xec, ...new Array<number>(30).fill(0xff), 0x7f]),
];

describe('strict ed25519', () => {
  it('refuses small-order keys with the identity signature, which ZIP-215 rules accept', async () => {
    const message = new TextEncoder().encode('any nonce');
    expect(await ed.verifyAsync(IDENTITY_SIGNATURE, message, SMALL_ORDER[0]!)).to.equal(true); // the hole: noble's default rules
    for (const key of SMALL_ORDER) {
      expect(weakPublicKey(key)).to.match(/small-order/);
      for (let i = 0; i < 16; i += 1) expect(verifyStrict(IDENTITY_SIGNATURE, new TextEncoder().encode(`nonce ${i}`), key)).to.equal(false);
    }
  });

  it('accepts a real signature and refuses it over another message, with S + L (malleated), and on a non-canonical key', () => {
    const k = Keypair.generate();
    const m = new TextEncoder().encode('tributary');
    const sig = signDetached(m, k.secretKey);
    expect(verifyStrict(sig, m, k.publicKey.toBytes())).to.equal(true);
    expect(verifyStrict(sig, new TextEncoder().encode('tributarY'), k.publicKey.toBytes())).to.equal(false);
    // S + L: the same signature under non-strict rules, refused by RFC 8032's S < L
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 31; i >= 0; i -= 1) s = (s << 8n) | BigInt(sig[32 + i]!);
    const big = s + L;
    const malleated = Uint8Array.from(sig);
    for (let i = 0; i < 32; i += 1) malleated[32 + i] = Number((big >> BigInt(8 * i)) & 0xffn);
    expect(verifyStrict(malleated, m, k.publicKey.toBytes())).to.equal(false);
    // y = p + 1 (non-canonical encoding of y = 1)
    const nonCanonical = Uint8Array.from([0xee, ...new Array<number>(30).fill(0xff), 0x7f]);
    expect(weakPublicKey(nonCanonical)).to.not.equal(undefined);
  });
});
