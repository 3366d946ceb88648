/**
 * The scheduler role (`serve --role scheduler`): executes the due payments of the gateways
 * that delegated a signer to the service, and settles metered pay-as-you-go usage. Any
 * number of processes may run it; they share the work through Postgres row claims.
 * Lifecycle events reach the Socket.IO rooms through the same Redis adapter as the API
 * nodes (a Server attached to nothing, as the notifier does).
 */
import { Server } from 'socket.io';
import type { AppContext } from '../context.js';
import { assertKeyConfig } from '../../../infra/signing-keys/rotate.js';
import { createRpcClient } from '../../../infra/solana/rpc-client.js';
import { chainIo } from '../../../commands/scheduler/chain.js';
import { loadFixtureSigners } from '../../../commands/scheduler/gateway-sync.js';
import { startScheduler } from '../../../commands/scheduler/scheduler.js';
import { settlementCommitment } from '../../../infra/solana/chain-reader.js';
import { startSettler } from '../../../commands/settlement/settler.js';
import { createRelease } from '../../../commands/x402/account-outstanding.js';
import { attachRedisAdapter } from '../../../queries/realtime/adapter.js';
import { roomOf } from '../../../queries/realtime/keys.js';
import { LIFECYCLE_VERSION } from '../../kernel/names/index.js';
import { onLocalnet } from '../../kernel/config/config.js';
import type { RunningRole } from './role.js';
import { startPeriodicReconciliation } from '../reconciliation.js';
import { startCheckoutExpiry } from '../../../commands/checkout/expiry.js';
import { checkSecretsAtStart, ROLE_SECRETS } from '../secrets.js';

export async function startSchedulerRole(ctx: AppContext): Promise<RunningRole> {
  // signer keys are sealed with the signing keys' encryption key: same rule, same message
  assertKeyConfig(ctx.config, ctx.logger);
  await checkSecretsAtStart(ctx, ROLE_SECRETS.scheduler);
  const { solana, localnet } = ctx.config;
  const log = ctx.logger.child({ component: 'scheduler' });
  // an intent or a charge counts as executed at confirmed at least (a processed block can be dropped by a fork)
  const io = chainIo(createRpcClient({ url: solana.rpcUrl, timeoutMs: solana.rpcTimeoutMs }), solana.programId, settlementCommitment(solana.commitment));
  if (onLocalnet(solana)) {
    const n = await loadFixtureSigners(ctx.db, localnet.fixturesPath, ctx.config.keys.encryptionKey, log);
    if (n > 0) log.info({ gateways: n }, 'localnet fixture gateways served with their fixture signers');
  }
  const server = new Server();
  const adapter = await attachRedisAdapter(server, ctx.config, log);
  const rooms = { emit: (trackingId: string, event: string, body: unknown) => void server.to(roomOf(trackingId)).emit(event, body) };
  const nowMs = () => ctx.clock.now();
  const recorded = () => ctx.redis.incr(ctx.keys.readVersion(LIFECYCLE_VERSION));
  const scheduler = startScheduler({ db: ctx.db, io, config: ctx.config, logger: log, nowMs, rooms, recorded });
  // charged or unbillable usage leaves the payer accounts' outstanding the API nodes admit against
  const release = createRelease(ctx.redis, ctx.config.redis.prefix);
  const settler = startSettler({ db: ctx.db, io, config: ctx.config, logger: log, nowMs, release, upto: { redis: ctx.redis, redisPrefix: ctx.config.redis.prefix } });
  const reconciler = startPeriodicReconciliation(ctx, io.rpc);
  // open checkout sessions past their expiry: expired and announced once, whichever scheduler takes them
  const checkoutExpiry = startCheckoutExpiry({ db: ctx.db, logger: log, nowMs, rooms });
  return {
    name: 'scheduler',
    async stop() {
      await Promise.all([scheduler.stop(), settler.stop(), reconciler.stop(), checkoutExpiry.stop()]);
      await server.of('/').adapter.close();
      await adapter.close();
    },
  };
}
