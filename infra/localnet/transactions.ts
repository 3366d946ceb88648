/**
 * Building and signing transactions with the localnet's keys: legacy messages, or v0 ones
 * (what today's wallets send). The workload sends v0: a legacy message built by web3.js
 * keeps instruction data as base58 text, and encoding and decoding it was a third of the
 * localnet's time.
 */
import { Keypair, MessageV0, TransactionMessage, VersionedTransaction, type PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { signMessage } from './signatures.js';
import { keyString } from './keys.js';

/**
 * A v0 message without address lookup tables, compiled as web3.js compiles one (the payer
 * first; then writable signers, read-only signers, writable and read-only non-signers,
 * each in order of first appearance) but keyed by memoized base58 (keyString).
 */
export function compileV0(payer: PublicKey, instructions: readonly TransactionInstruction[], recentBlockhash: string): MessageV0 {
  const metas = new Map<string, { key: PublicKey; signer: boolean; writable: boolean }>();
  const meta = (key: PublicKey) => {
    const id = keyString(key);
    let m = metas.get(id);
    if (!m) metas.set(id, (m = { key, signer: false, writable: false }));
    return m;
  };
  Object.assign(meta(payer), { signer: true, writable: true });
  for (const ix of instructions) {
    meta(ix.programId);
    for (const k of ix.keys) {
      const m = meta(k.pubkey);
      m.signer ||= k.isSigner;
      m.writable ||= k.isWritable;
    }
  }
  const all = [...metas.values()];
  const groups = [
    all.filter((m) => m.signer && m.writable), all.filter((m) => m.signer && !m.writable),
    all.filter((m) => !m.signer && m.writable), all.filter((m) => !m.signer && !m.writable),
  ];
  const ordered = groups.flat();
  const index = new Map(ordered.map((m, i) => [keyString(m.key), i]));
  const at = (key: PublicKey) => index.get(keyString(key))!;
  return new MessageV0({
    header: { numRequiredSignatures: groups[0]!.length + groups[1]!.length, numReadonlySignedAccounts: groups[1]!.length, numReadonlyUnsignedAccounts: groups[3]!.length },
    staticAccountKeys: ordered.map((m) => m.key),
    recentBlockhash,
    compiledInstructions: instructions.map((ix) => ({ programIdIndex: at(ix.programId), accountKeyIndexes: ix.keys.map((k) => at(k.pubkey)), data: ix.data })),
    addressTableLookups: [],
  });
}

export function signedTransaction(
  payer: Keypair, signers: readonly Keypair[], instructions: TransactionInstruction[], recentBlockhash: string,
  version: 'legacy' | 0 = 'legacy',
): VersionedTransaction {
  const message = version === 'legacy'
    ? new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash, instructions }).compileToLegacyMessage()
    : compileV0(payer.publicKey, instructions, recentBlockhash);
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
