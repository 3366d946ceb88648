/**
 * The payer account's transaction check on messages a wallet could not be handed by the
 * API: an instruction naming an account index past the message's keys is a 400 (an
 * AppError), not a crash of the address derivation.
 */
import { expect } from 'chai';
import { Keypair, MessageV0, VersionedTransaction } from '@solana/web3.js';
import { checkPayerTransaction } from '../../commands/payer-account/transactions.js';
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
