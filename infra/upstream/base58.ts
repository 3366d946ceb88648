/** Base58 public keys: what "a valid mint" means for every upstream answer we pass on. */
import bs58 from 'bs58';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** true when `s` is base58 and decodes to exactly 32 bytes (an ed25519 key or a PDA) */
export function isPublicKey(s: unknown): s is string {
  if (typeof s !== 'string' || !BASE58.test(s)) return false;
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}
