/** Per-group lag and pending counts from XINFO GROUPS, and the trim that follows them. */
import type { Redis } from 'ioredis';
import { compareStreamIds } from './stream-group.js';

export interface GroupInfo { name: string; consumers: number; pending: number; lastDeliveredId: string; lag: number | null }

/**
 * Each group's position as XINFO GROUPS reports it (lag as Redis has it): one call, for
 * the paths that poll and need only positions and pending counts.
 */
export async function groupPositions(redis: Redis, stream: string): Promise<GroupInfo[]> {
  try {
    return parseGroups((await redis.xinfo('GROUPS', stream)) as unknown[]);
  } catch (err) {
    if (String(err).includes('no such key')) return [];
    throw err;
  }
}

/**
 * Each group of the stream, with `lag` corrected where Redis keeps a wrong one: its
 * counters of entries added and read do not always survive a restart from the
 * append-only file with trimmed entries, and a group that has read the stream's last entry
 * was then seen reporting thousands of entries of lag for good. A group whose last
 * delivery is the stream's last entry has no lag; where Redis cannot tell (null), the
 * entries after the last delivery are counted, up to LAG_COUNT_CAP. For reports (status,
 * /metrics, drains).
 */
export async function groupInfo(redis: Redis, stream: string): Promise<GroupInfo[]> {
  const groups = await groupPositions(redis, stream);
  if (groups.length === 0) return groups;
  const lastId = await lastGeneratedId(redis, stream);
  for (const g of groups) {
    if (compareStreamIds(g.lastDeliveredId, lastId) >= 0) g.lag = 0;
    else if (g.lag === null) g.lag = (await redis.xrange(stream, `(${g.lastDeliveredId}`, '+', 'COUNT', LAG_COUNT_CAP)).length;
  }
  return groups;
}

const LAG_COUNT_CAP = 100_000;

async function lastGeneratedId(redis: Redis, stream: string): Promise<string> {
  const info = (await redis.xinfo('STREAM', stream)) as unknown[];
  const i = info.indexOf('last-generated-id');
  return i >= 0 ? String(info[i + 1]) : '0-0';
}

function parseGroups(raw: unknown[]): GroupInfo[] {
  return raw.map((g) => {
    const arr = g as (string | number | null)[];
    const m = new Map<string, string | number | null>();
    for (let i = 0; i + 1 < arr.length; i += 2) m.set(String(arr[i]), arr[i + 1] ?? null);
    const lag = m.get('lag');
    return {
      name: String(m.get('name')),
      consumers: Number(m.get('consumers') ?? 0),
      pending: Number(m.get('pending') ?? 0),
      lastDeliveredId: String(m.get('last-delivered-id') ?? '0-0'),
      lag: lag === null || lag === undefined ? null : Number(lag),
    };
  });
}

/**
 * Trims the stream below the oldest entry some group still needs: its oldest pending
 * entry, or what follows its last delivery. Needs every required group to exist, so
 * a projection that has not started yet still finds its entries.
 */
export async function trimAcknowledged(redis: Redis, stream: string, requiredGroups: readonly string[]): Promise<number> {
  const groups = await groupPositions(redis, stream);
  const present = new Set(groups.map((g) => g.name));
  if (groups.length === 0 || requiredGroups.some((g) => !present.has(g))) return 0;
  let floor: string | undefined;
  for (const g of groups) {
    let needed = g.lastDeliveredId;
    if (g.pending > 0) {
      const summary = (await redis.xpending(stream, g.name)) as unknown as [number, string | null];
      if (summary[1]) needed = summary[1];
    } else {
      const [ms = 0, seq = 0] = needed.split('-').map(Number);
      needed = `${ms}-${seq + 1}`;
    }
    if (floor === undefined || compareStreamIds(needed, floor) < 0) floor = needed;
  }
  if (!floor) return 0;
  return redis.xtrim(stream, 'MINID', floor);
}
