/** Socket.IO room names; the Redis names of the real-time layer are in src/keys. */
export { NOTIFIER_GROUP, realtimeKeys, type RealtimeKeys } from '../../src/kernel/names/index.js';

/** The Socket.IO room of a trackingId. */
export function roomOf(trackingId: string): string {
  return `t:${trackingId}`;
}
