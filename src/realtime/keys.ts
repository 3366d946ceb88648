/**
 * Redis names of the real-time layer, under the deployment's prefix (one per test file),
 * so that two deployments on one Redis never hear each other's rooms or leases.
 */
export function realtimeKeys(prefix: string) {
  return {
    /** channel prefix of the Socket.IO Redis adapter (plain `key`, sharded `channelPrefix`) */
    adapterChannel: `${prefix}socket.io`,
    /** sorted set socketId → lease expiry (ms, Redis clock) of the sockets on a trackingId */
    slots: (trackingId: string) => `${prefix}ws:slots:${trackingId}`,
    /** the notifier's dedup key of an event: `c:<consumer>:<ms>` while publishing, `p` once published */
    emitted: (eventId: string) => `${prefix}ws:emitted:${eventId}`,
    /** sockets that got an event through catch-up before the notifier claimed it: left out of its broadcast */
    except: (eventId: string) => `${prefix}ws:except:${eventId}`,
  };
}
export type RealtimeKeys = ReturnType<typeof realtimeKeys>;

/** The consumer group of the notifier, one for the whole cluster. */
export const NOTIFIER_GROUP = 'notifier';

/** The Socket.IO room of a trackingId. */
export function roomOf(trackingId: string): string {
  return `t:${trackingId}`;
}
