/**
 * SIGNING_KEY_ENCRYPTION_KEY with the earlier keys secrets may still be sealed under
 * (SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS). It is the current key's Buffer, so whatever seals
 * with it seals under the current key, and whatever opens with it (infra/crypto/secret-box.ts)
 * tries the earlier keys after it: every holder of "the key" (the key ring, the scheduler,
 * the webhooks, the fee payers) follows a rotation unchanged.
 */
export type SecretKey = Buffer & { readonly previous?: readonly Buffer[] };

/** The current key carrying `previous`; the property is not enumerable, so no dump of the key shows them. */
export function withPreviousKeys(current: Buffer, previous: readonly Buffer[]): SecretKey {
  const key = Buffer.from(current);
  Object.defineProperty(key, 'previous', { value: Object.freeze([...previous]), enumerable: false, writable: false });
  return key;
}

/** Whether opening with `key` may find a secret under an earlier key (re-sealing has work to look for). */
export const hasPreviousKeys = (key: SecretKey | undefined): boolean => (key?.previous?.length ?? 0) > 0;
