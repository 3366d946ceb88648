/** Moved to infra/redis/group-lag.ts (the consumer-group code lives once, in infra/redis); this re-export keeps code written against the old path compiling until the lead removes it. */
export * from '../../infra/redis/group-lag.js';
