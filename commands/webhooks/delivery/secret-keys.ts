/**
 * The signing keys of a claimed delivery, opened (AES-GCM) and decoded once per sealed
 * secret and kept: the hot path then costs one HMAC per key. While a rotated-out secret is
 * in its grace period (application clock) it signs too, after the current one.
 */
import { openSecret } from '../../../infra/crypto/secret-box.js';
import { secretAad } from '../secret-aad.js';
import { createLru } from '../../../src/kernel/domain/lru.js';
import { secretKey } from './signer.js';
import type { ClaimedDelivery } from './outbox-store.js';

type Sealed = Pick<ClaimedDelivery, 'webhook_id' | 'secret' | 'previous_secret' | 'previous_secret_until'>;

export function createSecretKeys(encryptionKey: Buffer | undefined, now: () => number, capacity = 10_000): (d: Sealed) => Buffer[] {
  // by webhook: its sealed secrets as last opened (no key built of the sealed text on every lookup)
  const opened = createLru<number, { sealed: string; key: Buffer }[]>(capacity);
  const open = (sealed: string, webhookId: number): Buffer => {
    let known = opened.get(webhookId);
    const hit = known?.find((o) => o.sealed === sealed);
    if (hit) return hit.key;
    const key = secretKey(openSecret(sealed, secretAad(webhookId), encryptionKey));
    // the current and the previous secret, and a rotation's new one: the last three opened
    known = [{ sealed, key }, ...(known ?? []).slice(0, 2)];
    opened.set(webhookId, known);
    return key;
  };
  return (d) => {
    const keys = [open(d.secret, d.webhook_id)];
    if (d.previous_secret !== null && d.previous_secret_until !== null && d.previous_secret_until.getTime() > now()) {
      keys.push(open(d.previous_secret, d.webhook_id));
    }
    return keys;
  };
}
