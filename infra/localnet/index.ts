/**
 * `tributary localnet`: a Solana cluster of one program, for machines that reach no real
 * cluster. JSON-RPC on `port`, WebSocket pubsub on `port + 1`, an emulation of the
 * Tributary program, and a seeded workload of `rate` events per second.
 *
 * `cluster: 'devnet'` answers as Solana devnet (its genesis hash, so its CAIP-2 id, and
 * its Token-2022 stablecoins besides USDC): the x402 packages, which know only the
 * public clusters, then pay and settle against it with their RPC URL pointed here.
 *
 * Port 0 picks a free pair of consecutive ports (tests run many localnets side by side).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import type { Logger } from 'pino';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { createChain, type Chain } from './chain.js';
import { createFaults, describeFaults, faultsOn, parseFaults, type FaultRates, type Faults } from './faults.js';
import { DEVNET_GENESIS_HASH, SLOT_MS, type LocalnetCluster } from './constants.js';
import { deriveHash } from './keys.js';
import { buildFixtures, writeFixtures, type LocalnetFixtures } from './fixtures.js';
import { createGenesisAccounts, deriveActors, runGenesisTransactions } from './genesis.js';
import { createRpcHttpServer } from './http-server.js';
import { createRpcMethods, stateSummary } from './rpc-methods.js';
import { invalidParams } from './rpc-errors.js';
import { createWorkload, type Workload } from './workload.js';
import { createPubsubServer, type PubsubServer } from './ws-server.js';

export type { LocalnetFixtures } from './fixtures.js';
export type { LocalnetCluster } from './constants.js';
export { describeFaults, parseFaults, FAULT_NAMES, type FaultRates } from './faults.js';
export type LedgerEvent = TributaryEvent;

export interface LocalnetOptions {
  port: number;
  seed: string;
  /** workload events per second, 0 = none */
  rate: number;
  /** the workload stops once it has emitted this many events (0 or unset = never) */
  maxEvents?: number;
  fixturesPath?: string;
  host?: string;
  logger?: Logger;
  /** share of events emitted through a self-CPI (emit_cpi!) instead of a log line; default 0.1 */
  cpiEventShare?: number;
  /** the hostile chain's faults (LOCALNET_FAULTS' syntax, or rates by name); default none */
  faults?: string | FaultRates;
  /** the seed of the faults' draws; default `seed` */
  faultsSeed?: string;
  /** what the localnet answers as (getGenesisHash, the mints at genesis); default `localnet` */
  cluster?: LocalnetCluster;
}

export interface Localnet {
  rpcUrl: string;
  wsUrl: string;
  fixtures: LocalnetFixtures;
  close(): Promise<void>;
  ledger(): LedgerEvent[];
  /** closes every websocket client server-side; returns how many */
  dropWebsockets(): number;
  state(): Record<string, unknown>;
  /** the emulated chain itself, for tests that need to look inside */
  chain: Chain;
  workload: Workload;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

const closeServer = (server: Server): Promise<void> => new Promise((resolve) => {
  server.closeAllConnections();
  server.close(() => resolve());
});

async function bindPair(
  http: Server, chain: Chain, opts: { port: number; host: string; logger?: Logger },
): Promise<{ port: number; pubsub: PubsubServer }> {
  for (let attempt = 0; ; attempt += 1) {
    const port = await listen(http, opts.port, opts.host);
    const pubsub = createPubsubServer(chain, port + 1, opts.host, opts.logger);
    try {
      await pubsub.ready;
      return { port, pubsub };
    } catch (err) {
      await pubsub.close().catch(() => undefined);
      if (opts.port !== 0 || attempt >= 20) {
        await closeServer(http);
        throw err;
      }
      await closeServer(http);
    }
  }
}

/** The faults' draws, and a chain whose clock lags when clock-lag is on. */
function hostileChain(opts: LocalnetOptions): { chain: Chain; faults?: Faults; rates: FaultRates } {
  const rates = typeof opts.faults === 'string' ? parseFaults(opts.faults) : opts.faults ?? {};
  if (!faultsOn(rates)) return { chain: createChain(opts.seed), rates };
  const ref: { chain?: Chain } = {};
  const faults = createFaults(rates, opts.faultsSeed ?? opts.seed, () => ref.chain?.slot() ?? 0);
  const chain = (ref.chain = createChain(opts.seed, faults.on('clock-lag') ? faults.clock(Date.now) : Date.now));
  chain.onSlot(() => faults.onSlot());
  return { chain, faults, rates };
}

/** The genesis hash and CAIP-2 id the localnet answers with: devnet's, or one of its seed. */
export function localnetIdentity(cluster: LocalnetCluster, seed: string): { cluster: LocalnetCluster; genesisHash: string; network: string } {
  const genesisHash = cluster === 'devnet' ? DEVNET_GENESIS_HASH : bs58.encode(deriveHash(seed, 'genesis'));
  return { cluster, genesisHash, network: cluster === 'devnet' ? `solana:${genesisHash.slice(0, 32)}` : 'solana:localnet' };
}

export async function startLocalnet(opts: LocalnetOptions): Promise<Localnet> {
  const host = opts.host ?? '127.0.0.1';
  const identity = localnetIdentity(opts.cluster ?? 'localnet', opts.seed);
  const { chain, faults, rates } = hostileChain(opts);
  const actors = deriveActors(opts.seed);
  createGenesisAccounts(chain, actors, identity.cluster);
  runGenesisTransactions(chain, actors);
  const workload = createWorkload(chain, actors, {
    rate: opts.rate, cpiEventShare: opts.cpiEventShare ?? 0.1, maxEvents: opts.maxEvents ?? 0, ...(opts.logger ? { logger: opts.logger } : {}),
  });

  const ref: { pubsub?: PubsubServer } = {};
  const methods = createRpcMethods(chain, {
    // NON-STANDARD, for fault-injection tests: drop every websocket client
    tributary_dropWebsockets: () => ref.pubsub?.dropConnections() ?? 0,
    // NON-STANDARD: the workload's own progress (the ledger also holds what clients and the service send)
    // NON-STANDARD: the workload's rate from now on, [eventsPerSecond] (the soak starts it once its clients are set up)
    tributary_setWorkloadRate: (params) => {
      const r = Number(params[0]);
      if (!Number.isFinite(r) || r < 0) throw invalidParams('expected [eventsPerSecond >= 0]');
      workload.setRate(r);
      return { rate: r };
    },
    // NON-STANDARD: [slots] produced at once (a test's wait for statuses and blockhashes to age)
    tributary_advanceSlots: (params) => {
      const n = Number(params[0]);
      if (!Number.isInteger(n) || n < 1 || n > 10_000) throw invalidParams('expected [slots between 1 and 10000]');
      for (let i = 0; i < n; i += 1) chain.advanceSlot();
      return { slot: chain.slot() };
    },
    // NON-STANDARD: the faults on, and those injected so far (counts, and the last thousand)
    tributary_getFaults: () => ({
      seed: opts.faultsSeed ?? opts.seed, faults: describeFaults(rates), ...(faults?.injected() ?? { counts: {}, log: [] }),
    }),
    tributary_getWorkload: () => ({ ...workload.stats(), maxEvents: opts.maxEvents ?? 0, done: (opts.maxEvents ?? 0) > 0 && workload.stats().events >= (opts.maxEvents ?? 0) }),
  }, faults, identity.genesisHash);
  const http = createRpcHttpServer(methods, opts.logger);
  const bound = await bindPair(http, chain, { port: opts.port, host, ...(opts.logger ? { logger: opts.logger } : {}) });
  ref.pubsub = bound.pubsub;
  const rpcUrl = `http://${host}:${bound.port}`;
  const wsUrl = `ws://${host}:${bound.port + 1}`;
  const fixtures = buildFixtures(chain, actors, rpcUrl, wsUrl, identity);
  if (opts.fixturesPath) await writeFixtures(opts.fixturesPath, fixtures);

  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    chain.advanceSlot();
    try {
      workload.tick(now - last);
    } catch (err) {
      opts.logger?.error({ err }, 'localnet workload step failed');
    }
    last = now;
  }, SLOT_MS);
  opts.logger?.info({
    rpcUrl, wsUrl, seed: opts.seed, rate: opts.rate, faults: describeFaults(rates), cluster: identity.cluster, network: identity.network,
  }, 'localnet listening');
  if (faults) opts.logger?.warn({ faults: describeFaults(rates), faultsSeed: faults.seed }, `localnet faults on: ${describeFaults(rates)}`);

  return {
    rpcUrl,
    wsUrl,
    fixtures,
    chain,
    workload,
    ledger: () => [...chain.ledger()],
    dropWebsockets: () => bound.pubsub.dropConnections(),
    state: () => stateSummary(chain),
    close: async () => {
      clearInterval(timer);
      await bound.pubsub.close();
      await closeServer(http);
    },
  };
}
