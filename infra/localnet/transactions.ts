/** Building and signing transactions (legacy messages) with the localnet's keys. */
import { Keypair, TransactionMessage, VersionedTransaction, type TransactionInstruction } from '@solana/web3.js';
import { signMessage } from './signatures.js';

export function signedTransaction(
  payer: Keypair, signers: readonly Keypair[], instructions: TransactionInstruction[], recentBlockhash: string,
): VersionedTransaction {
  const message = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash, instructions }).compileToLegacyMessage();
  const tx = new VersionedTransaction(message);
  const bytes = message.serialize();
  const all = [payer, ...signers];
  message.staticAccountKeys.slice(0, message.header.numRequiredSignatures).forEach((key, i) => {
    const signer = all.find((k) => k.publicKey.equals(key));
    if (!signer) throw new Error(`no signer for ${key.toBase58()}`);
    tx.signatures[i] = signMessage(bytes, signer.secretKey);
  });
  return tx;
}
