/**
 * `tributary localnet`, and the start hook that runs it inside `tributary start` when no
 * SOLANA_RPC_URL is set: the project's own chain, so the service runs anywhere. With
 * SOLANA_CLUSTER=devnet it answers as Solana devnet, so x402 clients pay against it.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ExtraCommand, StartHook } from './command.js';
import { loadConfigOrExit, processLogger } from './process.js';
import { describeFaults, parseFaults, startLocalnet, type Localnet } from '../../../infra/localnet/index.js';
import type { Config } from '../../kernel/config/config.js';
import type { Logger } from '../../../infra/log/logger.js';

async function runLocalnet(config: Config, logger: Logger): Promise<Localnet> {
  await mkdir(path.dirname(path.resolve(config.localnet.fixturesPath)), { recursive: true });
  const net = await startLocalnet({
    port: config.localnet.port,
    seed: config.localnet.seed,
    rate: config.localnet.rate,
    maxEvents: config.localnet.maxEvents,
    fixturesPath: config.localnet.fixturesPath,
    faults: config.localnet.faults,
    cluster: config.solana.cluster === 'devnet' ? 'devnet' : 'localnet',
    ...(config.localnet.faultsSeed === undefined ? {} : { faultsSeed: config.localnet.faultsSeed }),
    host: '127.0.0.1',
    logger: logger.child({ component: 'localnet' }),
  });
  logger.info({
    rpcUrl: net.rpcUrl, wsUrl: net.wsUrl, fixtures: config.localnet.fixturesPath, rate: config.localnet.rate, maxEvents: config.localnet.maxEvents,
    faults: describeFaults(parseFaults(config.localnet.faults)), network: net.fixtures.network,
  }, 'localnet running');
  return net;
}

export const localnetCommand: ExtraCommand = {
  usage: 'localnet',
  summary: 'the built-in Solana localnet and its workload (SOLANA_CLUSTER=devnet answers as devnet; LOCALNET_PORT, LOCALNET_SEED, LOCALNET_RATE, LOCALNET_MAX_EVENTS, LOCALNET_FIXTURES, LOCALNET_FAULTS, LOCALNET_FAULTS_SEED)',
  async run() {
    const config = loadConfigOrExit(process.env);
    const logger = processLogger(config, 'localnet');
    const net = await runLocalnet(config, logger);
    const stop = () => { void net.close().then(() => process.exit(0)); };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  },
};

export const localnetStartHook: StartHook = async (ctx) => {
  if (!ctx.config.solana.useLocalnet) return async () => undefined;
  const net = await runLocalnet(ctx.config, ctx.logger);
  return () => net.close();
};
