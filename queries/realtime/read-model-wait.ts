/**
 * Catch-up reads the payments read model, but the notifier may run ahead of it: a payment
 * broadcast just before a socket joined its room may not be in the model yet, and would
 * then reach the socket by neither path. So, once the socket is in its room, catch-up
 * waits until the payments projection has applied everything the notifier had been handed
 * by then: its group has delivered past the notifier's last-delivered id and holds nothing
 * pending up to it (the runner acknowledges only after its transaction commits).
 * Anything the notifier reads later is broadcast after the join and arrives live.
 */
import type { Redis } from 'ioredis';
import { groupPositions } from '../../infra/redis/group-lag.js';
import { compareStreamIds } from '../../infra/redis/stream-group.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True once the read model has caught up with the notifier; false on timeout (or no projection running). */
export async function readModelCaughtUp(
  redis: Redis, stream: string, notifierGroup: string, projectionGroup: string, timeoutMs: number, now: () => number,
): Promise<boolean> {
  let groups = await groupPositions(redis, stream);
  const notifier = groups.find((g) => g.name === notifierGroup);
  if (!notifier) return true; // no notifier: nothing was broadcast that the model could miss
  const target = notifier.lastDeliveredId;
  const deadline = now() + timeoutMs;
  for (;;) {
    const model = groups.find((g) => g.name === projectionGroup);
    if (model && compareStreamIds(model.lastDeliveredId, target) >= 0) {
      const pending = await redis.xpending(stream, projectionGroup, '-', target, 1);
      if (pending.length === 0) return true;
    }
    if (now() >= deadline) return false;
    await sleep(20);
    groups = await groupPositions(redis, stream);
  }
}
