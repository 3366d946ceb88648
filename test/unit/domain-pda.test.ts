/** PDA derivation with the program's seeds, memoized in a bounded LRU. */
import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import { createPdaDeriver, isPublicKey, u32le } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

const program = new PublicKey(PROGRAM_ID);
const owner = 'AU4grQhj3xF9NQ9Yn8xeJDdFBiz9P9xCsvoAfXYNs7qt';
const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const direct = (seeds: (Buffer | Uint8Array)[]) => PublicKey.findProgramAddressSync(seeds, program)[0].toBase58();

describe('domain: PDA derivation', () => {
  const pda = createPdaDeriver(PROGRAM_ID);

  it('derives every account with the program\'s seeds', () => {
    const up = direct([Buffer.from('user_payment'), new PublicKey(owner).toBytes(), new PublicKey(mint).toBytes()]);
    expect(pda.userPayment(owner, mint)).to.equal(up);
    expect(pda.gateway(owner)).to.equal(direct([Buffer.from('gateway'), new PublicKey(owner).toBytes()]));
    expect(pda.config()).to.equal(direct([Buffer.from('config')]));
    expect(pda.paymentPolicy(up, 258)).to.equal(direct([Buffer.from('payment_policy'), new PublicKey(up).toBytes(), Buffer.from([2, 1, 0, 0])]));
    expect(pda.composablePolicy(up, 1)).to.equal(direct([Buffer.from('composable_policy'), new PublicKey(up).toBytes(), Buffer.from([1, 0, 0, 0])]));
  });

  it('gives the same answer from its cache, and distinct seeds distinct addresses', () => {
    const up = pda.userPayment(owner, mint);
    expect(pda.paymentPolicy(up, 1)).to.equal(pda.paymentPolicy(up, 1));
    expect(pda.paymentPolicy(up, 1)).to.not.equal(pda.paymentPolicy(up, 2));
    expect(pda.paymentPolicy(up, 1)).to.not.equal(pda.composablePolicy(up, 1));
  });

  it('encodes policy ids as u32 little-endian and refuses what is not a u32', () => {
    expect([...u32le(0x01020304)]).to.deep.equal([4, 3, 2, 1]);
    expect(() => u32le(-1)).to.throw();
    expect(() => u32le(2 ** 32)).to.throw();
    expect(() => u32le(1.5)).to.throw();
  });

  it('tells 32-byte base58 keys from other strings', () => {
    expect(isPublicKey(owner)).to.equal(true);
    expect(isPublicKey('11111111111111111111111111111111')).to.equal(true);
    expect(isPublicKey('z'.repeat(44))).to.equal(false);
    expect(isPublicKey('0OIl')).to.equal(false);
    expect(isPublicKey('')).to.equal(false);
  });

  it('answers the same when asked again (the valid ones are remembered)', () => {
    for (const text of [owner, mint, '1'.repeat(32), `${owner}1`, owner.slice(0, 20), 'z'.repeat(44), owner.toLowerCase()]) {
      const first = isPublicKey(text);
      expect(isPublicKey(text), text).to.equal(first);
      expect(first, text).to.equal([owner, mint, '1'.repeat(32)].includes(text));
    }
  });
});

describe('domain: LRU', () => {
  it('evicts the least recently used key past its capacity', () => {
    const lru = createLru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).to.equal(1); // a is now the most recent
    lru.set('c', 3);
    expect(lru.get('b')).to.equal(undefined);
    expect(lru.get('a')).to.equal(1);
    expect(lru.get('c')).to.equal(3);
    expect(lru.size).to.equal(2);
    expect(() => createLru(0)).to.throw();
  });
});
