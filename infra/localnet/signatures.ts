/**
 * ed25519 signature checks for transactions sent to the localnet. @noble/ed25519 needs a
 * synchronous SHA-512 for its sync API; Node's own is the obvious one to give it.
 */
import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import type { VersionedTransaction } from '@solana/web3.js';

ed.hashes.sha512 = (msg: Uint8Array): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(64);
  out.set(createHash('sha512').update(msg).digest());
  return out;
};

/** Every required signer signed the serialized message. */
export function verifyTransaction(tx: VersionedTransaction): boolean {
  const message = tx.message.serialize();
  const required = tx.message.header.numRequiredSignatures;
  if (tx.signatures.length < required) return false;
  for (let i = 0; i < required; i += 1) {
    const sig = tx.signatures[i];
    const key = tx.message.staticAccountKeys[i];
    if (!sig || !key) return false;
    try {
      if (!ed.verify(sig, message, key.toBytes())) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Signs a message as web3.js would, but with the sync noble implementation (the workload signs many). */
export function signMessage(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return ed.sign(message, secretKey.subarray(0, 32));
}
