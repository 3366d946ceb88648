/**
 * Every name the service gives things in Redis and Postgres notifications, in one place:
 * stream keys, consumer groups, channels and key prefixes. Everything but the Postgres
 * channel lives under the deployment's prefix (REDIS_PREFIX; one per test file), so two
 * deployments on one Redis never see each other's keys. A new key gets its name here.
 */

/**
 * On a Redis Cluster (REDIS_CLUSTER_NODES) the deployment's prefix is a hash tag,
 * `{tributary:}`: every key built on it hashes to one slot, so each Lua script, MULTI and
 * multi-key command keeps its keys together (the spine, the money counters, the read
 * versions, the realtime marks). On one node the prefix stays as configured.
 */
export function clusterPrefix(prefix: string): string {
  return `{${prefix === '' ? 'tributary' : prefix}}`;
}

/**
 * The prefix of names that are only ever used one at a time (rate limit counters, the
 * shared upstream cache, Socket.IO's sharded channels): on a cluster the tag's braces
 * go, so each name hashes whole and they spread over the masters; on one node, the prefix.
 */
export function spreadPrefix(prefix: string): string {
  return prefix.length > 2 && prefix.startsWith('{') && prefix.endsWith('}') ? prefix.slice(1, -1) : prefix;
}

/** The event stream and what its consumer groups keep beside it. */
export function streamKeys(prefix: string) {
  return {
    /** the deployment's prefix, for the names below that take more than it */
    prefix,
    events: `${prefix}events`,
    deadLetters: (group: string) => `${prefix}dead:${group}`,
    attempts: (group: string) => `${prefix}attempts:${group}`,
    /** a read model's version, bumped after each commit that changed it (infra/cache/read-cache.ts) */
    readVersion: (readModel: string) => `${prefix}readversion:${readModel}`,
    /** bumped only by a change not described key by key (a replay, a model that names no keys): expires every answer of the model */
    readEpoch: (readModel: string) => `${prefix}readversion:${readModel}:epoch`,
    /** the version of one bucket of a read model's keys (src/kernel/names/read-scopes.ts), bumped by commits that touched a key in it */
    readScope: (readModel: string, bucket: number) => `${prefix}readversion:${readModel}#${bucket}`,
    /** a random name set once, read with every set of versions: a Redis that lost its keys has a new one, so versions counted again from 0 never match answers cached before */
    readGeneration: `${prefix}readversion:generation`,
  };
}
export type StreamKeys = ReturnType<typeof streamKeys>;

/** Names of the real-time layer. */
export function realtimeKeys(prefix: string) {
  return {
    /** channel prefix of the Socket.IO Redis adapter (plain `key`, sharded `channelPrefix`) */
    adapterChannel: `${spreadPrefix(prefix)}socket.io`,
    /** sorted set socketId → lease expiry (ms, Redis clock) of the sockets on a trackingId */
    slots: (trackingId: string) => `${prefix}ws:slots:${trackingId}`,
    /** the notifier's dedup key of an event: `c:<consumer>:<ms>` while publishing, `p` once published */
    emitted: (eventId: string) => `${prefix}ws:emitted:${eventId}`,
    /** sockets that got an event through catch-up before the notifier claimed it: left out of its broadcast */
    except: (eventId: string) => `${prefix}ws:except:${eventId}`,
  };
}
export type RealtimeKeys = ReturnType<typeof realtimeKeys>;

/**
 * Pub/sub channel: a credential was revoked (`{"apiKey": id, "gateway": address}`). Every
 * API node listens and ends the live feeds (Socket.IO /merchant) that were opened with it.
 */
export const credentialRevokedChannel = (prefix: string): string => `${prefix}credential-revoked`;

/** The consumer group of the notifier, one for the whole cluster. */
export const NOTIFIER_GROUP = 'notifier';

/** The payments projection's consumer group: the notifier's catch-up waits on it. */
export const PAYMENTS_GROUP = 'payments';
/** the merchant read model's projection (its consumer group and read-cache version) */
export const MERCHANT_PROJECTION = 'merchant';
/**
 * The read-cache version of the scheduler's lifecycle events (service_events): bumped
 * after each one is recorded, so cached answers that show past-due flags expire with it.
 */
export const LIFECYCLE_VERSION = 'lifecycle-events';

/** The indexer's cursor: the newest signature whose events are all in the stream. */
export const cursorKey = (prefix: string): string => `${prefix}indexer:cursor`;

/** The indexer's progress hash (slots, counts), read by /metrics. */
export const indexerProgressKey = (prefix: string): string => `${prefix}indexer:progress`;

/** Webhook delivery outcomes counted by the workers, read by /metrics. */
export const webhookOutcomesKey = (prefix: string): string => `${prefix}metrics:webhook-outcomes`;

/** The webhooks projection's fast path: events whose first attempts need no claim (src/kernel/wire/webhook-ready.ts). */
export const webhookReadyKey = (prefix: string): string => `${prefix}webhooks:ready`;
/** Set while a delivery worker pops webhookReadyKey: the projection pushes only then. */
export const webhookPoppersKey = (prefix: string): string => `${prefix}webhooks:poppers`;

/** The Postgres NOTIFY channel that wakes the webhook workers when the outbox grows (not prefixed: one per database). */
export const OUTBOX_CHANNEL = 'tributary_webhook_outbox';

/** The Redis channel on which a signing key rotation is announced to every node. */
export const rotationChannelKey = (prefix: string): string => `${prefix}keys:rotated`;

/** The prefix of a rate limit's counters. */
export const rateLimitPrefix = (prefix: string, limit: string): string => `${spreadPrefix(prefix)}rl:${limit}`;

/** A gateway's set of outstanding sign-in nonces. */
export const gatewayNoncesKey = (prefix: string, gateway: string): string => `${prefix}gw-auth:${gateway}`;

/** A gateway's counter that orders nonces issued within one millisecond. */
export const gatewayNonceSequenceKey = (prefix: string, gateway: string): string => `${prefix}gw-auth-seq:${gateway}`;

/** The shared cache of upstream answers. */
export const sharedCacheKey = (prefix: string, key: string): string => `${spreadPrefix(prefix)}cache:${key}`;

/** The pacing counter of one webhook endpoint's rate limit (one key a script). */
export const webhookRateKey = (prefix: string, webhookId: number | string): string => `${spreadPrefix(prefix)}webhook-rate:${webhookId}`;

/** The lock that keeps one pools sync running at a time. */
export const poolsSyncLockKey = (prefix: string): string => `${prefix}pools:sync:lock`;

/** The idempotency record of one Payment transaction, by its signature. */
export const x402PaymentKey = (prefix: string, signature: string): string => `${prefix}x402:payment:${signature}`;

/** The lease of an x402 exact payment's source token account while one of its payments is being settled. */
export const x402ExactSourceKey = (prefix: string, source: string): string => `${prefix}x402:exact-source:${source}`;
