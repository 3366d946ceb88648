/**
 * Key names with and without a Redis Cluster: on one node every name is the prefix and
 * its suffix as before; on a cluster the prefix is a hash tag, and the names used alone
 * drop it so that they spread.
 */
import { expect } from 'chai';
import {
  clusterPrefix, cursorKey, rateLimitPrefix, realtimeKeys, sharedCacheKey, spreadPrefix, streamKeys, webhookRateKey,
} from '../../src/kernel/names/index.js';
import { loadConfig } from '../../src/kernel/config/config.js';

describe('Redis key names with and without a cluster', () => {
  it('keeps every name of a single node as it was', () => {
    const p = 'tributary:';
    expect(streamKeys(p).events).to.equal('tributary:events');
    expect(cursorKey(p)).to.equal('tributary:indexer:cursor');
    expect(rateLimitPrefix(p, 'standard')).to.equal('tributary:rl:standard');
    expect(sharedCacheKey(p, 'k')).to.equal('tributary:cache:k');
    expect(webhookRateKey(p, 7)).to.equal('tributary:webhook-rate:7');
    expect(realtimeKeys(p).adapterChannel).to.equal('tributary:socket.io');
    expect(loadConfig({}).redis.prefix).to.equal('tributary:');
    expect(loadConfig({ REDIS_PREFIX: 'x:' }).redis.clusterNodes).to.deep.equal([]);
  });

  it('tags the prefix on a cluster and spreads the names used alone', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000', REDIS_PREFIX: 'acme:' });
    expect(config.redis.clusterNodes).to.deep.equal(['10.0.0.1:7000', '10.0.0.2:7000']);
    const p = config.redis.prefix;
    expect(p).to.equal('{acme:}');
    expect(streamKeys(p).events).to.equal('{acme:}events');
    expect(cursorKey(p)).to.equal('{acme:}indexer:cursor');
    expect(rateLimitPrefix(p, 'standard')).to.equal('acme:rl:standard');
    expect(sharedCacheKey(p, 'k')).to.equal('acme:cache:k');
    expect(webhookRateKey(p, 7)).to.equal('acme:webhook-rate:7');
    expect(realtimeKeys(p).adapterChannel).to.equal('acme:socket.io');
    expect(clusterPrefix('')).to.equal('{tributary}');
    expect(spreadPrefix('{tributary}')).to.equal('tributary');
  });
});
