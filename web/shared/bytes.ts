/** Base58 (Bitcoin alphabet, as Solana writes keys and signatures) and base64, for bytes in the page. */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = []; // base 58, least significant first
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i] ?? 0;
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] ?? 0) << 8;
      digits[j] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  let out = '1'.repeat(zeros);
  for (let k = digits.length - 1; k >= 0; k--) out += ALPHABET[digits[k] ?? 0] ?? '';
  return out;
}

export function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * The first signature of a serialized Solana transaction (legacy or v0): a compact-u16 count,
 * then 64-byte signatures. The transaction's id is this signature in base58.
 */
export function firstSignature(transaction: Uint8Array): Uint8Array {
  let count = 0;
  let offset = 0;
  for (let shift = 0; shift < 21; shift += 7) {
    const b = transaction[offset++];
    if (b === undefined) throw new Error('the transaction is cut short');
    count |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
  }
  if (count < 1 || transaction.length < offset + 64) throw new Error('the transaction carries no signature');
  return transaction.slice(offset, offset + 64);
}
