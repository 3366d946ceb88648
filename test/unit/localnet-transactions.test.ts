/**
 * The localnet's own v0 message compiler against web3.js's: byte for byte the same
 * message for the same instructions (payer first, the four key groups in order of first
 * appearance, a key's signer and writable flags merged across instructions).
 */
import { expect } from 'chai';
import { Keypair, TransactionInstruction, TransactionMessage, type PublicKey } from '@solana/web3.js';
import { compileV0 } from '../../infra/localnet/transactions.js';
import { createPrng } from '../../infra/localnet/prng.js';

describe('localnet v0 message compiler', () => {
  it('compiles what web3.js compiles, for random instruction sets', () => {
    const rng = createPrng('compile-v0');
    const keys: PublicKey[] = Array.from({ length: 12 }, () => Keypair.generate().publicKey);
    const pick = () => keys[Math.floor(rng.next() * keys.length)]!;
    const blockhash = Keypair.generate().publicKey.toBase58();
    for (let round = 0; round < 200; round += 1) {
      const payer = pick();
      const ixs = Array.from({ length: 1 + Math.floor(rng.next() * 4) }, () => new TransactionInstruction({
        programId: pick(),
        keys: Array.from({ length: Math.floor(rng.next() * 6) }, () => ({ pubkey: pick(), isSigner: rng.next() < 0.3, isWritable: rng.next() < 0.5 })),
        data: Buffer.from(Array.from({ length: Math.floor(rng.next() * 40) }, () => Math.floor(rng.next() * 256))),
      }));
      const ours = compileV0(payer, ixs, blockhash);
      const theirs = new TransactionMessage({ payerKey: payer, recentBlockhash: blockhash, instructions: ixs }).compileToV0Message();
      expect(Buffer.from(ours.serialize()).toString('hex'), `round ${round}`).to.equal(Buffer.from(theirs.serialize()).toString('hex'));
    }
  });
});
