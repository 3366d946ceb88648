/**
 * A gateway's payment policies from the read model (projections/policies), newest first
 * (creation slot, then address), shaped as the one normalized policy object, through the
 * same row reader as the policy query API (queries/policies).
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { rowToFacts, type Page } from '../policies/policy-rows.js';
import { normalizePolicy, type NormalizedPolicy } from '../../src/kernel/domain/policy.js';
import { upstreamUnavailable } from '../../src/kernel/http/errors.js';

export type { Page };

export type MerchantPolicies = (gateway: string, page: Page) => Promise<{ items: NormalizedPolicy[]; total: number }>;

export function readModelMerchantPolicies(db: Db): MerchantPolicies {
  return async (gateway, page) => {
    // a literal predicate, so the partial index (gateway, ...) WHERE NOT deleted applies
    const live = db.selectFrom('payment_policies').where(sql<boolean>`NOT deleted`).where('gateway', '=', gateway);
    const [rows, count] = await Promise.all([
      live.selectAll()
        .orderBy('created_slot', 'desc')
        .orderBy('address', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      live.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]).catch(() => { throw upstreamUnavailable('policy read model unavailable'); });
    return { items: rows.map((r) => normalizePolicy(rowToFacts('payment', r), 'read-model')), total: Number(count.n) };
  };
}
