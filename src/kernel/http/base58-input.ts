/** Base58 fields of a request (keys, signatures) decoded to their bytes, or a 400. */
import bs58 from 'bs58';
import { invalid } from './errors.js';

/**
 * `value` decoded, when it is base58 of exactly `size` bytes. Otherwise a 400:
 * `<field> is not base58`, or `wrongSize(length)` for the wrong number of bytes.
 */
export function base58Input(value: string, field: string, size: number, wrongSize: (length: number) => string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    throw invalid(`${field} is not base58`);
  }
  if (bytes.length !== size) throw invalid(wrongSize(bytes.length));
  return bytes;
}
