/** base58 writes what bs58 writes, and decodeBase58 reads what bs58 reads: random lengths and values, leading zeros, all zeros, all ones. */
import { expect } from 'chai';
import bs58 from 'bs58';
import { base58, decodeBase58 } from '../../src/kernel/events/base58.js';
import { createPrng } from '../../infra/localnet/prng.js';

describe('base58 against bs58', () => {
  it('agrees on 20,000 random byte strings of 0 to 70 bytes, some with leading zeros', () => {
    const rng = createPrng('base58');
    for (let n = 0; n < 20_000; n += 1) {
      const b = Buffer.alloc(rng.int(71));
      for (let i = 0; i < b.length; i += 1) b[i] = rng.int(256);
      const zeros = rng.int(4) === 0 ? Math.min(b.length, rng.int(5)) : 0;
      b.fill(0, 0, zeros);
      expect(base58(b), b.toString('hex')).to.equal(bs58.encode(b));
    }
  });

  it('agrees on keys of only zeros, only 0xff, and a one at either end', () => {
    for (const len of [0, 1, 2, 3, 31, 32, 33, 64]) {
      for (const b of [Buffer.alloc(len), Buffer.alloc(len, 0xff)]) expect(base58(b)).to.equal(bs58.encode(b));
      if (len > 0) {
        const first = Buffer.alloc(len); first[0] = 1;
        const last = Buffer.alloc(len); last[len - 1] = 1;
        expect(base58(first)).to.equal(bs58.encode(first));
        expect(base58(last)).to.equal(bs58.encode(last));
      }
    }
  });

  it('decodes what bs58 decodes: 5,000 random byte strings of 0 to 300 bytes, and refuses what bs58 refuses', () => {
    const rng = createPrng('base58-decode');
    for (let n = 0; n < 5_000; n += 1) {
      const b = Buffer.alloc(rng.int(301));
      for (let i = 0; i < b.length; i += 1) b[i] = rng.int(256);
      if (rng.int(4) === 0) b.fill(0, 0, Math.min(b.length, rng.int(5)));
      if (rng.int(20) === 0) b.fill(0);
      const text = bs58.encode(b);
      expect(decodeBase58(text)?.toString('hex'), text).to.equal(b.toString('hex'));
    }
    for (const text of ['', '1', '111', '2', 'z', '1z', 'zzzzzz']) expect(decodeBase58(text)?.toString('hex')).to.equal(Buffer.from(bs58.decode(text)).toString('hex'));
    for (const text of ['0', 'O', 'I', 'l', 'ab!', 'café', 'abc ']) {
      expect(() => bs58.decode(text)).to.throw();
      expect(decodeBase58(text)).to.equal(undefined);
    }
  });
});
