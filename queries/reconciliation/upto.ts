/**
 * x402://upto settlements: the service keeps one marker per settled authorization in
 * Redis (the amount, the transaction, whether it is still being sent), not in Postgres;
 * here they become service records like the others. A marker outlives its settlement by days, not forever: an
 * older settlement is compared by its payment alone.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import type { ServiceRecord } from './ledgers.js';

/** The marker's key, as the upto settlement writes it. */
export const uptoMarkerKey = (prefix: string, policy: string): string => `${prefix}x402:upto:${policy}`;

export async function uptoRecords(db: Db, redis: Redis, prefix: string, gateway: string, since: number): Promise<ServiceRecord[]> {
  const policies = await db.selectFrom('payment_policies').select(['address', 'updated_at']).where('gateway', '=', gateway)
    .where('variant', '=', 'UpTo').where('updated_at', '>=', String(since)).execute();
  if (policies.length === 0) return [];
  const marks = await redis.mget(...policies.map((p) => uptoMarkerKey(prefix, p.address)));
  const out: ServiceRecord[] = [];
  policies.forEach((p, i) => {
    const m = marks[i];
    if (!m) return;
    // state: sending while the settlement is in flight or in doubt; done (or absent, older markers) once it landed
    const mark = JSON.parse(m) as { amount?: string; transaction?: string; state?: string };
    if (!mark.transaction) return;
    out.push({ source: 'upto', id: p.address, policy: p.address, status: mark.state === 'sending' ? 'sending' : 'paid', amount: mark.amount ? BigInt(mark.amount) : null, signature: mark.transaction, at: Number(p.updated_at ?? since) });
  });
  return out;
}
