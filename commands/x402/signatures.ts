/**
 * The signatures of a transaction, checked before it is sent: each required signer's
 * ed25519 signature over the serialized message, with Node's native ed25519 (OpenSSL)
 * from the raw 32-byte public key wrapped as SPKI.
 */
import { createPublicKey, verify } from 'node:crypto';
import type { VersionedTransaction } from '@solana/web3.js';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Why the transaction's signatures are not all there and valid, or undefined when they are. */
export function signatureProblem(tx: VersionedTransaction): string | undefined {
  const message = tx.message.serialize();
  const required = tx.message.header.numRequiredSignatures;
  if (required < 1) return 'the transaction requires no signature';
  for (let i = 0; i < required; i += 1) {
    const sig = tx.signatures[i];
    const key = tx.message.staticAccountKeys[i];
    if (!key) return 'the transaction names fewer accounts than signers';
    if (!sig || sig.every((b) => b === 0)) return `the signature of ${key.toBase58()} is missing`;
    let ok = false;
    try {
      ok = verify(null, message, createPublicKey({ key: Buffer.concat([SPKI_PREFIX, key.toBytes()]), format: 'der', type: 'spki' }), sig);
    } catch {
      ok = false;
    }
    if (!ok) return `the signature of ${key.toBase58()} does not verify`;
  }
  return undefined;
}
