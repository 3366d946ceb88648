/**
 * Base58 (Bitcoin alphabet) of a byte string, as bs58.encode writes it, in 16-bit limbs
 * divided by 58^4 at a time: the ingest encodes every public key of every event, and
 * bs58's digit-by-digit carry loop was its largest single cost. Checked against bs58 by
 * codec-base58.test.ts.
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const D = 58 ** 4;

export function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros += 1;
  // big-endian 16-bit limbs of the number the bytes after the leading zeros make
  const rest = bytes.length - zeros;
  const limbs = new Array<number>(Math.ceil(rest / 2));
  for (let i = bytes.length - 1, l = limbs.length - 1; l >= 0; i -= 2, l -= 1) {
    limbs[l] = (i - 1 >= zeros ? bytes[i - 1]! << 8 : 0) | bytes[i]!;
  }
  let digits = '';
  let start = 0;
  while (start < limbs.length) {
    let rem = 0;
    for (let i = start; i < limbs.length; i += 1) {
      const cur = rem * 65536 + limbs[i]!;
      limbs[i] = Math.floor(cur / D);
      rem = cur % D;
    }
    while (start < limbs.length && limbs[start] === 0) start += 1;
    // four digits, least significant first; the last group loses its leading zeros below
    for (let k = 0; k < 4; k += 1) {
      digits = ALPHABET[rem % 58]! + digits;
      rem = Math.floor(rem / 58);
    }
  }
  let lead = 0;
  while (lead < digits.length && digits[lead] === '1') lead += 1;
  return '1'.repeat(zeros) + digits.slice(lead);
}
