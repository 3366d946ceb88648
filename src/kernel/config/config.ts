/**
 * The one configuration object, read once from the environment at start, validated,
 * and frozen. Only this module reads process.env (through the caller passing it in).
 */
import { ConfigError, EnvReader, type VarDoc } from './env-reader.js';
import * as s from './sections.js';

export { CLUSTERS, NETWORKS, USDC_DEVNET, USDC_MAINNET, parseDurationMs, type Cluster } from './values.js';

function build(r: EnvReader) {
  const f = s.readFoundations(r);
  return {
    logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info', 'pino log level'),
    http: s.readHttp(r, f),
    db: s.readDb(r, f),
    redis: s.readRedis(r, f),
    solana: s.readSolana(r, f),
    localnet: s.readLocalnet(r, f),
    projector: s.readProjector(r),
    indexer: s.readIndexer(r),
    keys: s.readKeys(r, f),
    metrics: s.readMetrics(r),
    access: s.readAccess(r),
    webhooks: s.readWebhooks(r, f),
    ws: s.readWs(r),
    upstream: s.readUpstream(r),
    rateLimit: s.readRateLimit(r),
    scheduler: s.readScheduler(r),
    x402: s.readX402(r, f),
    mcp: s.readMcp(r),
  };
}

export type Config = Readonly<ReturnType<typeof build>>;

/**
 * True when the chain is a localnet whose fixtures (seeded gateways, signers, the demo
 * gateway) this service knows: SOLANA_CLUSTER=localnet, or the built-in localnet in any
 * mode (answering as devnet included).
 */
export const onLocalnet = (solana: Config['solana']): boolean => solana.cluster === 'localnet' || solana.useLocalnet;

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Buffer.isBuffer(o)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Builds the configuration or throws a ConfigError naming every bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const r = new EnvReader(env);
  const cfg = build(r);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return deepFreeze(cfg);
}

/** Every variable with its default and meaning, for docs/configuration.md and `tributary config`. */
export function configDocs(): VarDoc[] {
  const r = new EnvReader({});
  build(r);
  return r.docs;
}

export { ConfigError };
