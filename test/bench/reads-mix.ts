/**
 * The read mix: the list routes users call, each with a weight and a key drawn
 * from a Zipf distribution over its key space (rank 1 the hottest), as HTTP paths for the
 * API and as pgbench scripts running the SQL the route runs, compiled from the same kysely
 * builders, with the key looked up by its rank in the seed's bench_* tables.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Compilable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { EVENT_NAMES, type EventName } from '../../src/kernel/events/catalog.js';
import { eventsQuery } from '../../queries/events/events-query.js';
import { trackingIdMemos } from '../../queries/events/params.js';
import { policiesQuery } from '../../queries/policies/policy-rows.js';
import { executionsQuery } from '../../queries/policies/executions.js';
import { oneTimeQuery } from '../../queries/onetime/onetime-query.js';
import type { PolicyFilter } from '../../queries/policies/filters.js';
import type { Seeded, SeedSize } from './reads-seed.js';

/** The read benches' settings (run.ts reads, reads-keys): data sizes, phase length, commit rate. */
export const SIZE: SeedSize = {
  gateways: Number(process.env['BENCH_GATEWAYS'] ?? 10_000),
  policies: Number(process.env['BENCH_POLICIES'] ?? 100_000),
  payments: Number(process.env['BENCH_PAYMENTS'] ?? 1_000_000),
};
export const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 15);
export const RATE = Number(process.env['BENCH_COMMIT_RATE'] ?? 200);
/** the read models the mix reads, whose projector the benches run */
export const MODELS = ['archive', 'payment-policies', 'payments', 'payment-stats'];
/** autocannon's setupRequest module: each request a path from the sampled list */
export const SETUP_REQUEST = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reads-request.cjs');

/** Zipf's exponent for every key space (pgbench's random_zipfian takes the same). */
export const ZIPF_S = 1.1;

type Space = 'gateway' | 'recipient' | 'policy' | 'tracking' | 'name';

export interface MixRoute {
  name: string;
  weight: number;
  space: Space;
  /** the HTTP path of the key of a rank */
  path(rank: number): string;
  /** the route's SQL for pgbench, the key a lookup by :k */
  sql: string;
  /**
   * For a route whose key the API spells into its statement (one prepared statement and
   * plan per key, not a parameter): the SQL of the key of a rank. pgbench then runs one
   * script per rank, each weighted by its rank's Zipf share of the route.
   */
  sqlOfRank?: (rank: number) => string;
}

/** Event names by rank: the archive's most common kind first. */
export const NAMES: readonly EventName[] = ['PaymentRecord', ...EVENT_NAMES.filter((n) => n !== 'PaymentRecord')];

/** each key space's lookup of the key of rank :k in the seed's tables (names have none: sqlOfRank) */
const LOOKUP: Record<Exclude<Space, 'name'>, string> = {
  gateway: '(SELECT key FROM bench_gateways WHERE i = :k)',
  recipient: '(SELECT key FROM bench_recipients WHERE i = :k)',
  policy: '(SELECT key FROM bench_policies WHERE i = :k)',
  tracking: '(SELECT memo FROM bench_policies WHERE i = :k)',
};

/** A literal of a compiled parameter, as Postgres reads it. */
function literal(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (Buffer.isBuffer(v)) return `'\\x${v.toString('hex')}'::bytea`;
  return `'${String(v).replace(/'/g, "''")}'`;
}

/** The compiled SQL with its parameters inlined, the rank-1 key's literals replaced by `lookups`. */
function script(q: Compilable, lookups: [unknown, string][]): string {
  const c = q.compile();
  return c.sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const v = c.parameters[Number(n) - 1];
    const found = lookups.find(([key]) => (Buffer.isBuffer(key) && Buffer.isBuffer(v) ? key.equals(v) : key === v));
    return found ? found[1] : literal(v);
  });
}

/**
 * The events query spells the event name into its text, a literal rather than a parameter
 * (queries/events: a rare name keeps a plan of its own), so script()'s lookups, which
 * replace parameters, never reached it: pgbench's events by name asked for PaymentRecord,
 * the archive's largest page, at every rank. A lookup through a subquery would not do
 * either: Postgres would plan it for a name it cannot see, the plan the API's literal
 * avoids. So pgbench runs the API's own statement of each name, one script a rank.
 */
function namedEvents(db: Db, page: { limit: number; offset: number }, rank: number): string {
  const name = NAMES[rank - 1]!;
  const text = script(eventsQuery(db, { name }, page), []);
  if (!text.includes(`"name" = '${name}'`)) throw new Error(`the events query no longer spells its name into its text: ${text}`);
  return text;
}

export function mixRoutes(db: Db, s: Seeded, defaultMint: string): MixRoute[] {
  const page = { limit: 100, offset: 0 };
  const filter = (f: Partial<PolicyFilter>, subscriptionsOnly = false): PolicyFilter =>
    ({ tokenMint: defaultMint, defaultMint: true, userPayments: [], subscriptionsOnly, ...f });
  const [memo64, memo32] = trackingIdMemos('order-1');
  const trackingLookups: [unknown, string][] = [[memo64, LOOKUP.tracking], [memo32, LOOKUP.tracking.replace('memo', 'memo32')]];
  const gw = s.gateways[0]!;
  const rcp = s.recipients[0]!;
  const pol = s.policies[0]!;
  return [
    { name: 'events by name', weight: 10, space: 'name', path: (k) => `/v1/events?eventName=${NAMES[k - 1]}`, sql: namedEvents(db, page, 1), sqlOfRank: (k) => namedEvents(db, page, k) },
    { name: 'events by trackingId', weight: 15, space: 'tracking', path: (k) => `/v1/events?trackingId=order-${k}`, sql: script(eventsQuery(db, { memos: [memo64!, memo32!] }, page), trackingLookups) },
    { name: 'subscriptions by gateway', weight: 15, space: 'gateway', path: (k) => `/v1/subscriptions?gatewayPublicKey=${s.gateways[k - 1]}`, sql: script(policiesQuery(db, 'payment', filter({ gateway: gw }, true), page), [[gw, LOOKUP.gateway]]) },
    { name: 'payment policies by gateway', weight: 10, space: 'gateway', path: (k) => `/v1/payment-policies?gatewayPublicKey=${s.gateways[k - 1]}`, sql: script(policiesQuery(db, 'payment', filter({ gateway: gw }), page), [[gw, LOOKUP.gateway]]) },
    { name: 'payment policies by recipient', weight: 10, space: 'recipient', path: (k) => `/v1/payment-policies?recipient=${s.recipients[k - 1]}`, sql: script(policiesQuery(db, 'payment', filter({ recipient: rcp }), page), [[rcp, LOOKUP.recipient]]) },
    { name: 'payment policies by trackingId', weight: 10, space: 'tracking', path: (k) => `/v1/payment-policies?trackingId=order-${k}`, sql: script(policiesQuery(db, 'payment', filter({ memo: memo64! }), page), trackingLookups) },
    { name: 'executions', weight: 15, space: 'policy', path: (k) => `/v1/payment-policies/${s.policies[k - 1]}/executions`, sql: script(executionsQuery(db, 'payment', pol, page), [[pol, LOOKUP.policy]]) },
    { name: 'one-time', weight: 10, space: 'tracking', path: (k) => `/v1/onetime/order-${k}`, sql: script(oneTimeQuery(db, memo64!, undefined).limit(2), trackingLookups) },
    {
      name: 'payment stats', weight: 5, space: 'gateway', path: (k) => `/v1/events/payments/stats?gateway=${s.gateways[k - 1]}`,
      // projections/stats/query.ts's statement for a range of whole days (none given: every day)
      sql: `SELECT coalesce(sum(payments), 0)::text AS n, coalesce(sum(volume), 0)::text AS v FROM payment_stats_daily WHERE gateway = ${LOOKUP.gateway}`,
    },
  ];
}

export function spaceSizes(s: Seeded): Record<Space, number> {
  return { gateway: s.gateways.length, recipient: s.recipients.length, policy: s.policies.length, tracking: s.policies.length, name: NAMES.length };
}

/** Zipf's weight 1/k^s of each rank k = 1..n (index 0 is rank 1), not normalized. */
function zipfWeights(n: number, s: number): Float64Array {
  const w = new Float64Array(n);
  for (let k = 1; k <= n; k += 1) w[k - 1] = 1 / k ** s;
  return w;
}

/** Ranks 1..n drawn with probability ∝ 1/k^s (inverse of the cumulative distribution). */
export function zipfSampler(n: number, s: number, random: () => number = Math.random): () => number {
  const cdf = zipfWeights(n, s);
  let sum = 0;
  for (let i = 0; i < n; i += 1) { sum += cdf[i]!; cdf[i] = sum; }
  return () => {
    const u = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1; else hi = mid;
    }
    return lo + 1;
  };
}

/** `count` request paths of the mix, weighted by route, keys by Zipf rank, in random order. */
export function samplePaths(routes: readonly MixRoute[], sizes: Record<Space, number>, count: number): string[] {
  const samplers = Object.fromEntries(Object.entries(sizes).map(([space, n]) => [space, zipfSampler(n, ZIPF_S)])) as Record<Space, () => number>;
  const total = routes.reduce((n, r) => n + r.weight, 0);
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    let w = Math.random() * total;
    const r = routes.find((x) => (w -= x.weight) < 0) ?? routes[routes.length - 1]!;
    out.push(r.path(samplers[r.space]()));
  }
  return out;
}

/**
 * pgbench reads `:name` as a variable even inside a string literal, so the timestamp
 * format's `HH24:MI:SS` became a parameter nobody binds ("could not determine data type of
 * parameter $1"). Quoted colons render the same text and are not variables.
 */
const pgbenchSafe = (sql: string): string => sql.replaceAll('HH24:MI:SS', 'HH24":"MI":"SS');

/** pgbench's script weights are integers: a route's weight times this, split among its ranks where it has sqlOfRank */
const WEIGHT_SCALE = 1000;

/** Zipf's probability of each rank 1..n (index 0 is rank 1). */
function zipfShares(n: number, s: number): number[] {
  const w = zipfWeights(n, s);
  const sum = w.reduce((a, b) => a + b, 0);
  return Array.from(w, (x) => x / sum);
}

/** One pgbench script per route (`-f file@weight`), each drawing its key as the API load does. */
export async function writeScripts(dir: string, routes: readonly MixRoute[], sizes: Record<Space, number>): Promise<string[]> {
  const args: string[] = [];
  for (const [i, r] of routes.entries()) {
    if (r.sqlOfRank) {
      for (const [at, share] of zipfShares(sizes[r.space], ZIPF_S).entries()) {
        const weight = Math.round(r.weight * WEIGHT_SCALE * share);
        if (weight === 0) continue;
        const file = path.join(dir, `route-${i}-rank-${at + 1}.sql`);
        await writeFile(file, `${pgbenchSafe(r.sqlOfRank(at + 1))};\n`);
        args.push('-f', `${file}@${weight}`);
      }
      continue;
    }
    const file = path.join(dir, `route-${i}.sql`);
    await writeFile(file, `\\set k random_zipfian(1, ${sizes[r.space]}, ${ZIPF_S})\n${pgbenchSafe(r.sql)};\n`);
    args.push('-f', `${file}@${r.weight * WEIGHT_SCALE}`);
  }
  return args;
}

/**
 * Read cache outcomes so far, summed over an API node's processes: one /metrics scrape per
 * process, each on a new connection, which node:cluster hands to the processes in turn.
 */
export async function cacheOutcomes(url: string, processes: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < processes; i += 1) {
    const text = await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text();
    for (const m of text.matchAll(/^tributary_read_cache_requests_total\{result="(\w+)"\} (\d+)/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}
