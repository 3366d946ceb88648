/**
 * Base58 (Bitcoin alphabet) of a byte string, as bs58.encode writes it. The ingest writes
 * every public key of every event, and bs58's digit-by-digit carry loop was its largest
 * single cost: here the number is divided by 58^5 at a time, over 16-bit limbs held in a
 * reused typed array, and the digits are written into a reused buffer read once as
 * latin1. Quotients stay below 2^16 and dividends below 2^46, so the float division is
 * exact after flooring. Checked against bs58 by codec-base58.test.ts.
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const D = 58 ** 5;

let limbs = new Float64Array(64);
let digits = Buffer.alloc(192);

export function base58(bytes: Uint8Array): string {
  const n = bytes.length;
  let zeros = 0;
  while (zeros < n && bytes[zeros] === 0) zeros += 1;
  const rest = n - zeros;
  const count = (rest + 1) >> 1;
  // every byte makes at most log(256)/log(58) < 1.37 digits
  const size = zeros + Math.ceil(rest * 1.37) + 5;
  if (count > limbs.length) limbs = new Float64Array(count * 2);
  if (size > digits.length) digits = Buffer.alloc(size * 2);
  // big-endian 16-bit limbs of the number the bytes after the leading zeros make
  for (let i = n - 1, l = count - 1; l >= 0; i -= 2, l -= 1) {
    limbs[l] = (i - 1 >= zeros ? bytes[i - 1]! << 8 : 0) | bytes[i]!;
  }
  let at = digits.length;
  let start = 0;
  while (start < count) {
    let rem = 0;
    for (let i = start; i < count; i += 1) {
      const cur = rem * 65536 + limbs[i]!;
      const q = Math.floor(cur / D);
      limbs[i] = q;
      rem = cur - q * D;
    }
    while (start < count && limbs[start] === 0) start += 1;
    // five digits, least significant first; the last group's leading zeros are cut below
    for (let k = 0; k < 5; k += 1) {
      const q = (rem / 58) | 0;
      digits[--at] = CODES[rem - q * 58]!;
      rem = q;
    }
  }
  while (at < digits.length && digits[at] === 0x31) at += 1;
  for (let z = 0; z < zeros; z += 1) digits[--at] = 0x31;
  return digits.toString('latin1', at, digits.length);
}
