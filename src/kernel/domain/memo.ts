/**
 * Tracking ids travel on chain as memos: UTF-8, zero-padded to 64 bytes on payment
 * policies and records, 32 bytes on composable policies. A lookup by tracking id compares
 * these exact bytes, so two ids that differ only after the memo's end cannot collide
 * silently: an id that does not fit is refused rather than truncated.
 */
import { bytesToText, textToFixedBytes } from '../events/codec.js';

export const PAYMENT_MEMO_BYTES = 64;
export const COMPOSABLE_MEMO_BYTES = 32;

/** The memo bytes of a tracking id, or undefined when it is empty or does not fit. */
export function trackingIdToMemo(trackingId: string, size: number): Buffer | undefined {
  if (trackingId.length === 0) return undefined;
  return textToFixedBytes(trackingId, size);
}

/** Memo bytes of decoded data: `memo_hex` when the codec kept them, else the text re-encoded. */
export function memoFromData(data: { memo?: unknown; memo_hex?: unknown }, size: number): Buffer {
  if (typeof data.memo_hex === 'string') return Buffer.from(data.memo_hex, 'hex');
  const text = typeof data.memo === 'string' ? data.memo : '';
  return textToFixedBytes(text, size) ?? Buffer.alloc(size);
}

export function memoToTrackingId(memo: Uint8Array): string {
  return bytesToText(memo);
}
