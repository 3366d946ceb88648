/** The three venue clients of one process, each behind its own timeout and circuit breaker. */
import type { Config } from '../../src/kernel/config/config.js';
import type { Logger } from '../../infra/log/logger.js';
import { createUpstreamClient } from '../../infra/upstream/http-client.js';
import { createMeteoraClient } from '../../infra/upstream/venues/meteora.js';
import { createRaydiumClient } from '../../infra/upstream/venues/raydium.js';
import { createWhirlpoolClient } from '../../infra/upstream/venues/whirlpool.js';
import type { VenueClient } from '../../infra/upstream/venues/types.js';

export function createVenueClients(config: Config, logger: Logger): VenueClient[] {
  const u = config.upstream;
  const http = (name: string, baseUrl: string) => createUpstreamClient({
    name, baseUrl, timeoutMs: u.timeoutMs, logger, breaker: { resetTimeoutMs: u.breakerResetMs },
  });
  return [
    createMeteoraClient(http('meteora', u.meteoraApiUrl)),
    createRaydiumClient(http('raydium', u.raydiumApiUrl)),
    createWhirlpoolClient(http('whirlpool', u.orcaApiUrl)),
  ];
}
