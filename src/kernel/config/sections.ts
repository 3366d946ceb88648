/**
 * The sections of the configuration, each read by one function. The order of the reads
 * is the order `tributary config` and docs/configuration.md list the variables in.
 */
import type { EnvReader } from './env-reader.js';
import { clusterPrefix } from '../names/index.js';
import { corsOriginOf, ownOrigin } from './origins.js';
import { CLUSTERS, DEFAULT_STABLECOIN, NETWORKS, deriveWsUrl, durations, ms, parseKey32 } from './values.js';
import { withPreviousKeys, type SecretKey } from './secret-key.js';

/** The values several sections derive their defaults from, read before them. */
export function readFoundations(r: EnvReader) {
  const localnetPort = r.int('LOCALNET_PORT', 8899, 'localnet JSON-RPC port; its websocket listens on the next port', 1, 65534);
  const rpcUrlSet = r.url('SOLANA_RPC_URL', undefined, ['http:', 'https:'], 'Solana JSON-RPC endpoint; unset = start and use the built-in localnet');
  const rpcUrl = rpcUrlSet ?? `http://127.0.0.1:${localnetPort}`;
  const wsDefault = rpcUrlSet ? deriveWsUrl(rpcUrlSet) : `ws://127.0.0.1:${localnetPort + 1}`;
  const cluster = r.oneOf('SOLANA_CLUSTER', CLUSTERS, rpcUrlSet ? 'mainnet' : 'localnet', 'cluster: the CAIP-2 network reported and the default stablecoin mint (default: localnet without SOLANA_RPC_URL, else mainnet); devnet without SOLANA_RPC_URL runs the built-in localnet answering as devnet (its genesis hash, devnet USDC and Token-2022 stablecoins)');
  const encryptionKey = readEncryptionKeys(r);
  const readUrl = r.url('DATABASE_READ_URL', undefined, ['postgres:', 'postgresql:'], 'optional PostgreSQL replica for query routes');
  const prefix = r.str('REDIS_PREFIX', 'tributary:', 'prefix of every Redis key (the stream is <prefix>events)');
  return { localnetPort, rpcUrlSet, rpcUrl, wsDefault, cluster, encryptionKey, readUrl, prefix };
}

export type Foundations = ReturnType<typeof readFoundations>;

const KEY32 = '32 bytes as 64 hex characters or base64';

/**
 * SIGNING_KEY_ENCRYPTION_KEY, carrying SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS (secret-key.ts).
 * A problem names the variable and the entry's position, never a key.
 */
function readEncryptionKeys(r: EnvReader): SecretKey | undefined {
  const currentRaw = r.optStr('SIGNING_KEY_ENCRYPTION_KEY', '32-byte key (64 hex chars or base64) that encrypts every secret at rest (JWT signing keys, scheduler signers, webhook secrets, exact fee payers; AES-256-GCM); plaintext left by a development run, and secrets under a key of SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS, are sealed under it at start');
  const previousRaw = r.optStr('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS', 'earlier SIGNING_KEY_ENCRYPTION_KEYs, comma-separated, each like it: secrets sealed under one still open, and each process re-seals them under SIGNING_KEY_ENCRYPTION_KEY at start (or `tributary keys seal`); remove a key once `keys seal` or /v1/health counts 0 secrets under a previous key');
  const current = currentRaw === undefined ? undefined : parseKey32(currentRaw);
  if (currentRaw !== undefined) r.check('SIGNING_KEY_ENCRYPTION_KEY', current !== undefined, KEY32, '<redacted>');
  const entries = (previousRaw ?? '').split(',').map((e) => e.trim()).filter((e) => e.length > 0);
  const previous: Buffer[] = [];
  entries.forEach((entry, i) => {
    const key = parseKey32(entry);
    const at = `entry ${i + 1} of ${entries.length}`;
    if (key === undefined) r.check('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS', false, `${KEY32} in ${at}`, '<redacted>');
    else if (current?.equals(key)) r.refuse('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS', `${at} is SIGNING_KEY_ENCRYPTION_KEY itself: list only the keys it replaced`);
    else previous.push(key);
  });
  if (entries.length > 0 && currentRaw === undefined) {
    r.refuse('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS', 'set without SIGNING_KEY_ENCRYPTION_KEY: previous keys only open secrets, the current key seals them; set the new key in SIGNING_KEY_ENCRYPTION_KEY');
  }
  return current === undefined ? undefined : withPreviousKeys(current, previous);
}

export const readHttp = (r: EnvReader, f: Foundations) => {
  const port = r.int('PORT', 3002, 'HTTP port of the API node', 0, 65535);
  const host = r.str('HOST', '0.0.0.0', 'interface the API node listens on');
  const publicUrl = r.optStr('PUBLIC_BASE_URL', 'external base URL (used in 402 resource URLs and issuer); default http://localhost:PORT');
  return {
    port, host, publicUrl,
    bodyLimit: r.str('HTTP_BODY_LIMIT', '64kb', 'largest accepted request body'),
    maxJsonDepth: r.int('HTTP_MAX_JSON_DEPTH', 32, 'deepest nesting of arrays and objects accepted in a JSON body; deeper answers 400', 1, 1000),
    trustProxy: r.str('TRUST_PROXY', 'false', "express 'trust proxy' setting: false, true, a hop count or a list of proxy addresses; the client IP comes from X-Forwarded-For only when set"),
    corsOrigins: readCorsOrigins(r, ownOrigin(publicUrl, port)),
    requestTimeoutMs: r.int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 'server-side request timeout', 1000),
    maxLimit: r.int('API_MAX_LIMIT', 1000, 'largest limit accepted by paginated endpoints', 1, 100_000),
    // versions expire every answer a commit changes on the primary; a replica may lag them, so its answers live shortly
    readCacheTtlMs: r.int('READ_CACHE_TTL_MS', f.readUrl === undefined ? 30_000 : 1000, 'longest life of a cached list answer on an API node; entries also expire at the next commit that changes them (1000 when DATABASE_READ_URL is set: a replica may lag the versions; 0 = no cache)', 0, 3_600_000),
    apiProcesses: r.int('API_PROCESSES', 1, 'processes serving PORT (node:cluster) when a process runs the api role alone (serve --role api); up to one per free core', 1, 256),
    readCacheMaxMb: r.int('READ_CACHE_MAX_MB', 64, 'memory bound of an API node\'s read cache, least recently used evicted first', 1, 65_536),
  };
};

/** CORS_ORIGINS, each entry read as an origin (or `*`); an entry that is neither stops the start. */
function readCorsOrigins(r: EnvReader, own: string): string[] {
  const entries = r.list('CORS_ORIGINS', own, "origins (scheme://host[:port]) whose pages may call the HTTP API and Socket.IO, comma-separated; default: this service's own origin (PUBLIC_BASE_URL's, else http://localhost:PORT); * lets any other origin make credential-free calls (no Authorization or x-api-key); x-admin-key is never allowed cross-origin (docs/security.md)");
  const origins: string[] = [];
  for (const entry of entries) {
    const origin = corsOriginOf(entry);
    r.check('CORS_ORIGINS', origin !== undefined, 'a comma-separated list of origins (https://shop.example) or *', entry);
    if (origin !== undefined && !origins.includes(origin)) origins.push(origin);
  }
  return origins;
}

export const readDb = (r: EnvReader, f: Foundations) => ({
  url: r.url('DATABASE_URL', 'postgres://root@127.0.0.1:5432/tributary', ['postgres:', 'postgresql:'], 'PostgreSQL primary (writes, projections)') ?? '',
  readUrl: f.readUrl,
  poolMax: r.int('DATABASE_POOL_MAX', 10, 'connections per pool per process (the read pool may open as many again for list pages read as bytes)', 1, 500),
  readStatementTimeoutMs: r.int('DATABASE_READ_STATEMENT_TIMEOUT_MS', 5000, 'statement timeout of the query routes\' read pool (a query past it answers 503); 0 = none', 0, 600_000),
});

/** On a Redis Cluster the prefix becomes a hash tag (src/kernel/names: clusterPrefix). */
const withClusterTag = <T extends { prefix: string; clusterNodes: readonly string[] }>(s: T): T =>
  (s.clusterNodes.length > 0 ? { ...s, prefix: clusterPrefix(s.prefix) } : s);

export const readRedis = (r: EnvReader, f: Foundations) => withClusterTag({
  url: r.url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:'], 'Redis (streams, nonces, rate limits, caches, Socket.IO adapter)') ?? '',
  prefix: f.prefix,
  sentinels: r.list('REDIS_SENTINELS', '', 'optional Sentinel nodes host:port,host:port; when set, REDIS_URL gives only password and db'),
  sentinelName: r.str('REDIS_SENTINEL_NAME', 'mymaster', 'Sentinel master name'),
  clusterNodes: r.list('REDIS_CLUSTER_NODES', '', 'optional Redis Cluster nodes host:port,host:port (ioredis Cluster; REDIS_URL gives only user and password; keys take {REDIS_PREFIX} as hash tag; docs/scaling.md)'),
});

export const readSolana = (r: EnvReader, f: Foundations) => ({
  rpcUrl: f.rpcUrl,
  wsUrl: r.url('SOLANA_WS_URL', f.wsDefault, ['ws:', 'wss:'], 'Solana websocket endpoint (default derived from SOLANA_RPC_URL)') ?? f.wsDefault,
  useLocalnet: f.rpcUrlSet === undefined,
  cluster: f.cluster,
  network: NETWORKS[f.cluster],
  defaultStablecoin: DEFAULT_STABLECOIN[f.cluster],
  commitment: r.oneOf('SOLANA_COMMITMENT', ['processed', 'confirmed', 'finalized'] as const, 'confirmed', 'commitment of subscriptions and reads'),
  programId: r.str('TRIBUTARY_PROGRAM_ID', 'TRibg8W8zmPHQqWtyAD1rEBRXEdyU13Mu6qX1Sg42tJ', 'Tributary program id'),
  rpcTimeoutMs: r.int('SOLANA_RPC_TIMEOUT_MS', 10_000, 'timeout of each RPC call', 100),
});

export const readLocalnet = (r: EnvReader, f: Foundations) => ({
  port: f.localnetPort,
  seed: r.str('LOCALNET_SEED', 'tributary', 'seed of the localnet keys and workload'),
  rate: r.int('LOCALNET_RATE', 5, 'localnet workload events per second (0 = none)', 0, 100_000),
  maxEvents: r.int('LOCALNET_MAX_EVENTS', 0, 'the localnet workload stops once it has emitted this many events (0 = never); a fixed, seeded history for tests and benchmarks', 0),
  fixturesPath: r.str('LOCALNET_FIXTURES', '.localnet/fixtures.json', 'where the localnet writes its mints, gateways and wallets'),
  faults: r.str('LOCALNET_FAULTS', 'off', 'the localnet as a hostile RPC node: `all`, or a comma-separated list of delayed-landing, lost-answer, send-errors, forgetful-status, clock-lag, blockhash-expiry, each optionally `=rate` (0..1); `off` or empty = none'),
  faultsSeed: r.optStr('LOCALNET_FAULTS_SEED', 'seed of the localnet faults\' draws (unset: LOCALNET_SEED); the same seed and sends give the same faults'),
});

export const readProjector = (r: EnvReader) => ({
  batchSize: r.int('PROJECTOR_BATCH_SIZE', 500, 'stream entries read per batch', 1, 10_000),
  blockMs: r.int('PROJECTOR_BLOCK_MS', 1000, 'XREADGROUP BLOCK time', 10, 60_000),
  maxAttempts: r.int('PROJECTOR_MAX_ATTEMPTS', 5, 'failed attempts before an entry goes to the dead-letter stream', 1, 100),
  claimIdleMs: r.int('PROJECTOR_CLAIM_IDLE_MS', 30_000, 'idle time after which a dead consumer\'s pending entries are reclaimed (above the longest batch)', 100),
  trimIntervalMs: r.int('STREAM_TRIM_INTERVAL_MS', 10_000, 'how often the stream is trimmed below what every group acknowledged', 100),
  only: r.list('PROJECTIONS', '', 'projections this projector process runs, comma-separated (default: all)'),
});

export const readIndexer = (r: EnvReader) => ({
  backfillIntervalMs: r.int('INDEXER_BACKFILL_INTERVAL_MS', 30_000, 'period of gap repair', 100),
  pageSize: r.int('INDEXER_PAGE_SIZE', 1000, 'getSignaturesForAddress page size', 1, 1000),
  batchSize: r.int('INDEXER_BATCH_SIZE', 50, 'transactions fetched per step, in one JSON-RPC batch request', 1, 1000),
  batchRequests: r.bool('INDEXER_RPC_BATCH', true, 'fetch transactions with JSON-RPC batch requests; false for RPC nodes that refuse batches (parallel single calls instead)'),
});

export const readKeys = (r: EnvReader, f: Foundations) => ({
  encryptionKey: f.encryptionKey,
  devMode: r.bool('TRIBUTARY_DEV_MODE', false, 'development mode: every secret (JWT signing keys, scheduler signers, webhook secrets, exact fee payers) stored unencrypted when SIGNING_KEY_ENCRYPTION_KEY is unset (logged loudly)'),
  gracePeriodSeconds: r.int('KEY_GRACE_PERIOD_SECONDS', 86_400, 'how long a rotated-out key stays in the JWKS', 0),
  adminApiKey: r.optStr('ADMIN_API_KEY', 'administrator key for x-admin-key; unset = admin routes refuse'),
  issuer: r.str('JWT_ISSUER', 'tributary', 'iss of issued JWTs'),
  audience: r.str('JWT_AUDIENCE', 'tributary-api', 'aud of issued JWTs'),
  tokenMaxTtlSeconds: r.int('TOKEN_MAX_TTL_SECONDS', 3600, 'cap on the lifetime of issued tokens', 60),
  gatewayTokenTtlSeconds: r.int('GATEWAY_TOKEN_TTL_SECONDS', 3600, 'lifetime of gateway JWTs', 60),
  gatewayKeysCacheMs: r.int('GATEWAY_KEYS_CACHE_MS', 5000, 'how long a node trusts a gateway\'s signer and active flag when checking gateway JWTs at use (a changed signer\'s tokens are refused at most this late)', 0, 600_000),
  nonceTtlSeconds: r.int('GATEWAY_NONCE_TTL_SECONDS', 300, 'lifetime of a gateway sign-in nonce', 5),
  tokensRequireWalletProof: r.bool('TOKENS_REQUIRE_WALLET_PROOF', true, 'POST /v1/tokens/issue asks for a signed challenge (POST /v1/tokens/challenge) of the wallet; false = the open behaviour of SPEC.md, where anyone may name any wallet (logged loudly)'),
  tokenChallengeTtlSeconds: r.int('TOKEN_CHALLENGE_TTL_SECONDS', 60, 'lifetime of a POST /v1/tokens/challenge nonce (single use, on any node)', 5, 3600),
  paymentProofMaxAgeSeconds: r.int('TOKEN_PAYMENT_MAX_AGE_SECONDS', 600, 'how recent a payment must be for its transactionSignature to earn a token (POST /v1/tokens/issue)', 1),
});

export const readMetrics = (r: EnvReader) => ({
  token: r.optStr('METRICS_TOKEN', 'when set, /metrics answers only requests with Authorization: Bearer <this token> (401 otherwise)'),
  port: r.int('METRICS_PORT', 0, 'when set, /metrics is served on this port only (on METRICS_HOST), not on the API port; 0 = on the API port', 0, 65535),
  host: r.str('METRICS_HOST', '127.0.0.1', 'interface of the METRICS_PORT listener'),
});

export const readAccess = (r: EnvReader) => ({
  subscriptionGraceSeconds: r.int('SUBSCRIPTION_GRACE_SECONDS', 259_200, 'access follows payment: the cap of a subscription\'s grace (deferred bearer, tokens/issue claim), honoured until next_payment_due + the grace, a tenth of its period unless the requirement says less; past it the bearer gets 402 and the claim says overdue', 0),
});

export const readWebhooks = (r: EnvReader, f: Foundations) => ({
  allowPrivateTargets: r.bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', f.cluster === 'localnet' || f.rpcUrlSet === undefined, 'allow webhook targets on private, loopback and link-local addresses (default: true on a localnet, the built-in one in either mode included, where receivers run on this machine; else false)'),
  timeoutMs: r.int('WEBHOOK_TIMEOUT_MS', 10_000, 'timeout of one delivery attempt', 10),
  retryDelaysMs: ms(r.list('WEBHOOK_RETRY_DELAYS_MS', '1000,2000,3000', 'quick retries after a failed attempt (SPEC: up to 3, after 1 s, 2 s, 3 s)'), 'WEBHOOK_RETRY_DELAYS_MS', r),
  slowScheduleMs: ms(r.listOrNone('WEBHOOK_SLOW_SCHEDULE_MS', '60000,300000,1800000,7200000,21600000',
    'extension beyond SPEC: later retries after the quick ones, then dead; set it empty for SPEC\'s exact behaviour (dead once the third retry fails)'), 'WEBHOOK_SLOW_SCHEDULE_MS', r),
  concurrency: r.int('WEBHOOK_CONCURRENCY', 16, 'deliveries in flight per worker', 1, 1000),
  pollMs: r.int('WEBHOOK_POLL_MS', 200, 'outbox poll period when idle', 10),
  maxPerGateway: r.int('WEBHOOK_MAX_PER_GATEWAY', 20, 'webhooks a gateway may register (each receives every event of the gateway)', 1, 1000),
  secretGraceSeconds: r.int('WEBHOOK_SECRET_GRACE_SECONDS', 86_400, 'after a secret rotation, how long the previous secret also signs every delivery', 0),
  retentionDays: r.int('WEBHOOK_RETENTION_DAYS', 30, 'delivered and dead deliveries and their attempts are deleted this many days after they finished', 1),
  pruneIntervalMs: r.int('WEBHOOK_PRUNE_INTERVAL_MS', 60_000, 'how often a worker prunes deliveries past their retention', 10),
  retryAfterMaxSeconds: r.int('WEBHOOK_RETRY_AFTER_MAX_SECONDS', 3600, 'the longest Retry-After (429/503) a receiver gets honored', 0),
});

export const readWs = (r: EnvReader) => ({
  maxConnectionsPerTrackingId: r.int('WS_MAX_CONNECTIONS_PER_TRACKING_ID', 10, 'cap on sockets subscribed to one trackingId across all nodes', 1),
  maxConnectionsPerIpPerTrackingId: r.int('WS_MAX_CONNECTIONS_PER_IP_PER_TRACKING_ID', 3, 'cap on sockets subscribed to one trackingId from one client address (IPv4, or IPv6 /64) across all nodes, so one address cannot take every slot', 1),
  maxMessagesPerMinute: r.int('WS_MAX_MESSAGES_PER_MINUTE', 120, 'messages (subscribe, unsubscribe) one Socket.IO connection may send per minute; past it they are refused with rate_limited', 1),
  maxCatchUpsPerMinute: r.int('WS_MAX_CATCH_UPS_PER_MINUTE', 100, 'catch-ups (subscribe with since, a read-model query each) one connection may ask for per minute (a reconnecting client following its 100 trackingIds needs 100)', 1),
  leaseSeconds: r.int('WS_LEASE_SECONDS', 30, 'lease of a connection slot; a dead node\'s slots free within it', 2),
  sharded: r.bool('WS_SHARDED_ADAPTER', false, 'use the sharded Redis adapter (Redis 7 sharded pub/sub)'),
  authRecheckSeconds: r.int('WS_AUTH_RECHECK_SECONDS', 30, 'each node checks the credential of every live merchant feed (/merchant) this often: a key revoked while the announcement was lost, or a wallet no longer the gateway\'s, ends its feed at most this late', 1),
});

export const readUpstream = (r: EnvReader) => ({
  tokensApiUrl: r.url('TOKENS_API_URL', undefined, ['http:', 'https:'], 'token catalog base URL'),
  tokensApiKey: r.optStr('TOKENS_API_KEY', 'token catalog credential, sent only by the server'),
  timeoutMs: r.int('UPSTREAM_TIMEOUT_MS', 5000, 'timeout of upstream catalog and venue calls', 10),
  breakerResetMs: r.int('UPSTREAM_BREAKER_RESET_MS', 30_000, 'how long an open upstream circuit waits before a trial call', 100),
  meteoraApiUrl: r.url('METEORA_API_URL', 'https://dlmm-api.meteora.ag', ['http:', 'https:'], 'Meteora DLMM public API base URL') ?? '',
  raydiumApiUrl: r.url('RAYDIUM_API_URL', 'https://api-v3.raydium.io', ['http:', 'https:'], 'Raydium API v3 base URL') ?? '',
  orcaApiUrl: r.url('ORCA_API_URL', 'https://api.orca.so/v2/solana', ['http:', 'https:'], 'Orca whirlpool public API base URL') ?? '',
  poolSyncIntervalMs: r.int('POOL_SYNC_INTERVAL_MS', 300_000, 'period of the pool sync worker (0 = no sync)', 0),
  poolSyncMaxPerVenue: r.int('POOL_SYNC_MAX_PER_VENUE', 500, 'pools kept per venue by the sync worker, by TVL', 1, 100_000),
  poolSearchCacheSeconds: r.int('POOL_SEARCH_CACHE_SECONDS', 60, 'cache of a pool search per (q, venue, limit)', 1),
});

export const readRateLimit = (r: EnvReader) => ({
  standardPerMinute: r.int('RATE_LIMIT_PER_MINUTE', 600, 'standard per-IP limit on routes without one of their own', 1),
  tokensIssuePerMinute: r.int('RATE_LIMIT_TOKENS_ISSUE_PER_MINUTE', 200, 'POST /v1/tokens/issue per wallet', 1),
  catalogPerMinute: r.int('RATE_LIMIT_CATALOG_PER_MINUTE', 120, 'assets and pools search per IP', 1),
  gatewayChallengePerMinute: r.int('RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE', 30, 'POST /v1/gateway/{gateway}/auth/challenge per client IP and gateway (each challenge evicts an older nonce of the gateway)', 1),
  webhookTestPerMinute: r.int('RATE_LIMIT_WEBHOOK_TEST_PER_MINUTE', 10, 'POST /v1/webhooks/{id}/test per gateway (each test is an outbound request from this service)', 1),
  x402VerifyPerMinute: r.int('RATE_LIMIT_X402_VERIFY_PER_MINUTE', 30, 'POST /v1/x402/resources/verify per gateway (each check is an outbound request from this service)', 1),
});

export const readScheduler = (r: EnvReader) => ({
  dunningScheduleMs: durations(r.list('SCHEDULER_DUNNING_SCHEDULE', '1h,6h,24h,72h', 'retries of a past-due payment (insufficient balance or delegation), as durations (500ms, 30s, 5m, 1h, 2d); after the last one the subscription is given up (subscription.canceled)'), 'SCHEDULER_DUNNING_SCHEDULE', r),
  pollMs: r.int('SCHEDULER_POLL_MS', 1000, 'how often the scheduler looks for due payments and retries', 50, 600_000),
  batchSize: r.int('SCHEDULER_BATCH_SIZE', 50, 'execution intents a scheduler process claims at once', 1, 10_000),
  concurrency: r.int('SCHEDULER_CONCURRENCY', 8, 'executions a scheduler process has in flight', 1, 1000),
  leaseMs: r.int('SCHEDULER_LEASE_MS', 60_000, 'how long a claimed intent is reserved to one scheduler process (a dead one\'s claims are taken over after it)', 1000),
  retryMs: r.int('SCHEDULER_RETRY_MS', 2000, 'delay before retrying after an RPC or blockhash error', 10),
  cooldownMs: r.int('SCHEDULER_COOLDOWN_MS', 300_000, 'pause of a policy after three consecutive failed attempts', 10),
  upcomingLeadSeconds: r.int('SCHEDULER_UPCOMING_LEAD_SECONDS', 259_200, 'how long before a due date payment.upcoming is sent (0 = never)', 0),
  signerMinLamports: r.int('SCHEDULER_SIGNER_MIN_LAMPORTS', 50_000_000, 'a scheduler signer with fewer lamports (transaction fees) is reported with a warning', 0),
  settleIntervalMs: r.int('PAYG_SETTLE_INTERVAL_MS', 60_000, 'pay-as-you-go: the longest unsettled usage waits before it is charged', 100),
  settleThreshold: r.int('PAYG_SETTLE_THRESHOLD', 1_000_000, 'pay-as-you-go: unsettled usage of a policy (smallest units) that is charged at once', 1),
  rolloverMarginSeconds: r.int('PAYG_ROLLOVER_MARGIN_SECONDS', 30, 'pay-as-you-go: usage is charged this long before the chain\'s period ends at the latest', 0),
  absenceConfirmMs: r.int('PAYG_ABSENCE_CONFIRM_MS', 30_000, 'a policy the chain answers missing is read again at least this long later before its pay-as-you-go usage is made unbillable or its scheduled (subscription, milestone) payment is dropped (an RPC node behind may not have a new policy yet)', 0),
});

export const readX402 = (r: EnvReader, f: Foundations) => ({
  discoveryAllowHttpLoopback: r.bool('X402_DISCOVERY_ALLOW_HTTP_LOOPBACK', f.cluster === 'localnet' || f.rpcUrlSet === undefined, 'accept http:// resources on loopback hosts (127.0.0.0/8, ::1, localhost) in PUT /v1/x402/resources, for development and tests; elsewhere only https (default: true on a localnet, the built-in one included, else false)'),
  jwtTtlSeconds: r.int('X402_JWT_TTL_SECONDS', 3600, 'lifetime of the JWT a paid x402 request earns', 60),
  cacheMs: r.int('X402_CACHE_MS', 5000, 'x402 bearer path: how long a node trusts a policy\'s status and a verified JWT (a pause or deletion on chain is refused at most this late)', 0, 600_000),
  confirmTimeoutMs: r.int('X402_CONFIRM_TIMEOUT_MS', 30_000, 'how long a Payment transaction may take to confirm before the request answers 503', 1000),
  idempotencyTtlSeconds: r.int('X402_IDEMPOTENCY_TTL_SECONDS', 86_400, 'how long the answer to a settled Payment header is kept for its repeats', 60),
  meterAhead: r.int('X402_METER_AHEAD', 64, 'pay-as-you-go and prepaid: the most ledger rows a busy counter (a payer\'s period or credit at one price) has recorded ahead in one block, so that its requests wait for no statement (docs/money.md); 0: every row written as its request comes', 0, 1024),
  paygReservationSeconds: r.int('X402_PAYG_RESERVATION_SECONDS', 300, 'pay-as-you-go: how long a request may take to be answered (less a tenth, 30 s at most); a chunk not served by then (its process died) is dropped, never charged', 1),
  exact: {
    maxPriorityFeeMicroLamports: r.int('X402_EXACT_MAX_PRIORITY_FEE_MICROLAMPORTS', 50_000, 'x402 exact: the highest compute unit price (microlamports) a payment may set; the fee payer pays it', 0),
    maxComputeUnits: r.int('X402_EXACT_MAX_COMPUTE_UNITS', 400_000, 'x402 exact: the highest compute unit limit a payment may set', 1, 1_400_000),
    feePayerMinLamports: r.int('X402_EXACT_FEE_PAYER_MIN_LAMPORTS', 50_000_000, 'x402 exact: a fee payer with fewer lamports is reported with a warning (status, /metrics)', 0),
    feePayerGraceSeconds: r.int('X402_EXACT_FEE_PAYER_GRACE_SECONDS', 3600, 'x402 exact: how long a rotated-out fee payer still co-signs payments built for it', 0),
  },
  demo: {
    enabled: r.bool('X402_DEMO_ENABLED', true, 'serve /v1/x402/demo (every method), protected by a deferred and a x402://payg requirement'),
    recipient: r.optStr('X402_DEMO_RECIPIENT', 'demo recipient wallet (unset on the localnet: the first fixture gateway\'s authority; elsewhere the demo is off)'),
    gateway: r.optStr('X402_DEMO_GATEWAY', 'demo gateway account (unset on the localnet: the first fixture gateway of LOCALNET_SEED)'),
    tokenMint: r.optStr('X402_DEMO_TOKEN_MINT', 'demo token mint (unset: the cluster\'s default stablecoin)'),
    amount: r.int('X402_DEMO_AMOUNT', 1_000_000, 'demo subscription amount per period, smallest units', 1),
    frequency: r.str('X402_DEMO_FREQUENCY', 'Monthly', 'demo subscription frequency: Daily, Weekly, Monthly, Quarterly, SemiAnnually, Annually or Custom:<seconds>'),
    paygPrice: r.int('X402_DEMO_PAYG_PRICE', 10_000, 'demo pay-as-you-go price of one request, smallest units', 1),
    paygMaxChunk: r.int('X402_DEMO_PAYG_MAX_CHUNK', 100_000, 'demo pay-as-you-go max_chunk_amount', 1),
    paygMaxPerPeriod: r.int('X402_DEMO_PAYG_MAX_PER_PERIOD', 1_000_000, 'demo pay-as-you-go max_amount_per_period', 1),
    paygPeriodSeconds: r.int('X402_DEMO_PAYG_PERIOD_SECONDS', 86_400, 'demo pay-as-you-go period_length_seconds', 1),
    paygMaxUnsettled: r.int('X402_DEMO_PAYG_MAX_UNSETTLED', 0, 'demo pay-as-you-go maxUnsettledAmount, used and not charged yet per payer; 0: ten periods\' cap', 0),
  },
});

export const readMcp = (r: EnvReader) => ({
  enabled: r.bool('MCP_ENABLED', false, 'serve the Model Context Protocol (Streamable HTTP) at /mcp on the API: read tools for agents and the paid demo tool (`tributary mcp` serves stdio regardless)'),
});
