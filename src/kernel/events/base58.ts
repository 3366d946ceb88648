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

const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i += 1) DIGIT[ALPHABET.charCodeAt(i)] = i;
/** Whether text[from, to) is all characters of the alphabet (empty counts). */
export function isBase58(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 128 || DIGIT[c]! < 0) return false;
  }
  return true;
}

/** 58^k for the chunks of up to eight digits (58^8 < 2^53: a chunk adds up exactly in a double) */
const POW58 = Array.from({ length: 9 }, (_, k) => 58n ** BigInt(k));

/**
 * The bytes of a base58 text, as bs58.decode gives them; undefined for a character
 * outside the alphabet. Eight digits at a time into one BigInt, whose multiplications
 * run natively over the whole number, then its hex as bytes: the indexer decodes the
 * data of every inner instruction of the program (a few hundred digits each), and a
 * digit-by-digit loop in JavaScript is quadratic in the instruction's length (16-bit
 * limbs five digits at a time took twice as long as this).
 */
export function decodeBase58(text: string): Buffer | undefined {
  const n = text.length;
  let ones = 0;
  while (ones < n && text.charCodeAt(ones) === 0x31) ones += 1;
  let value = 0n;
  for (let i = ones; i < n; i += 8) {
    const end = Math.min(n, i + 8);
    let chunk = 0;
    for (let j = i; j < end; j += 1) {
      const c = text.charCodeAt(j);
      const d = c < 128 ? DIGIT[c]! : -1;
      if (d < 0) return undefined;
      chunk = chunk * 58 + d;
    }
    value = value * POW58[end - i]! + BigInt(chunk);
  }
  if (value === 0n) return Buffer.alloc(ones);
  const hex = value.toString(16);
  // the number's big-endian bytes, after a zero byte for each leading one
  const bytes = Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
  return ones === 0 ? bytes : Buffer.concat([Buffer.alloc(ones), bytes]);
}
