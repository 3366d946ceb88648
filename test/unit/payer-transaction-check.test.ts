/**
 * The payer account's transaction check on messages a wallet could not be handed by the
 * API: an instruction naming an account index past the message's keys is a 400 (an
 * AppError), not a crash of the address derivation.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { Keypair, MessageV0, Transaction, VersionedTransaction } from '@solana/web3.js';
import { checkPayerTransaction, inspectPayerTransaction } from '../../commands/payer-account/transactions.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { AppError } from '../../src/kernel/http/errors.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { programInstruction } from '../../infra/solana/instructions.js';

describe('payer transaction check', () => {
  const pdas = createPdaDeriver(PROGRAM_ID);
  const wallet = Keypair.generate();
  const owner = wallet.publicKey.toBase58();
  const mint = Keypair.generate().publicKey.toBase58();
  const up = pdas.userPayment(owner, mint);
  const pause = programInstruction(PROGRAM_ID, 'change_payment_policy_status', {
    owner, user_payment: up, token_mint: mint, payment_policy: pdas.paymentPolicy(up, 1), config: pdas.config(),
  }, { policy_id: 1, new_status: { Paused: {} } });

  function signed(edit: (m: MessageV0) => void): VersionedTransaction {
    const m = MessageV0.compile({ payerKey: wallet.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58(), instructions: [pause] });
    edit(m);
    const tx = new VersionedTransaction(m);
    tx.sign([wallet]);
    return tx;
  }

  it('takes the wallet\'s own pause', () => {
    expect(checkPayerTransaction(signed(() => undefined), owner, pdas)).to.deep.equal(['change_payment_policy_status']);
  });

  it('refuses an account index past the keys with a 400', () => {
    const tx = signed((m) => { m.compiledInstructions[0]!.accountKeyIndexes[2] = 200; });
    expect(() => checkPayerTransaction(tx, owner, pdas)).to.throw(AppError, /account index/);
  });

  it('refuses another wallet\'s pause though the wallet signed and paid', () => {
    const tx = signed(() => undefined);
    expect(() => checkPayerTransaction(tx, Keypair.generate().publicKey.toBase58(), pdas)).to.throw(AppError, /fee payer/);
  });
});

describe('payer transaction check, fuzzed', () => {
  const pdas = createPdaDeriver(PROGRAM_ID);
  const wallet = Keypair.generate();
  const owner = wallet.publicKey.toBase58();
  const mint = Keypair.generate().publicKey.toBase58();
  const up = pdas.userPayment(owner, mint);
  const ix = programInstruction(PROGRAM_ID, 'delete_payment_policy', {
    owner, user_payment: up, token_mint: mint, payment_policy: pdas.paymentPolicy(up, 3), config: pdas.config(), rent_payer: owner,
  }, { policy_id: 3 });
  const tx = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(ix);
  tx.sign(wallet);
  const valid = tx.serialize();

  it('takes the valid bytes, and answers any byte of them changed with the instruction or a 400, never a crash', () => {
    expect(inspectPayerTransaction(valid.toString('base64'), owner, pdas).instructions).to.deep.equal(['delete_payment_policy']);
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.nat(8), (edits, cut) => {
      const bytes = Buffer.from(valid);
      for (const [at, value] of edits) bytes[at] = value;
      const wire = bytes.subarray(0, bytes.length - cut).toString('base64');
      try {
        const { instructions } = inspectPayerTransaction(wire, owner, pdas);
        // accepted only when still signed by the wallet over what it holds
        expect(instructions.every((n) => ['delete_payment_policy', 'change_payment_policy_status', 'revoke', 'compute_budget'].includes(n))).to.equal(true);
      } catch (err) {
        expect(err).to.be.instanceOf(AppError);
        expect((err as AppError).kind).to.equal('invalid_input');
      }
    }), { seed: 7, numRuns: 2000 });
  });
});
