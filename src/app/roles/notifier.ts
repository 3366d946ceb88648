/** The notifier role: payments from the stream to the Socket.IO rooms of every API node. */
import type { AppContext } from '../context.js';
import { startNotifier } from '../../../queries/realtime/notifier.js';
import type { RunningRole } from './role.js';

export async function startNotifierRole(ctx: AppContext): Promise<RunningRole> {
  const { batchSize, blockMs, claimIdleMs } = ctx.config.projector;
  const notifier = await startNotifier(ctx, { batchSize, blockMs, claimIdleMs });
  return { name: 'notifier', stop: () => notifier.stop() };
}
