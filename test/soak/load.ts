/**
 * Mixed reads at a high rate through nginx (autocannon), with every answer kept in
 * one-second buckets, so the error rate of any time window (each fault) can be read
 * afterwards. An error is a 5xx, a timeout or a failed connection; 4xx answers (a
 * trackingId with no one-time payment is a 404) and 429s are counted on their own.
 */
import autocannon from 'autocannon';

export interface Bucket { ok: number; client4xx: number; limited: number; server5xx: number; failed: number; latencyMs: number[] }

export interface WindowStats { requests: number; errors: number; errorRate: number; server5xx: number; failed: number; limited: number; client4xx: number; p99Ms: number }

export interface ReadLoad {
  /** statistics of [fromMs, toMs) */
  window(fromMs: number, toMs: number): WindowStats;
  stop(): Promise<{ requests: number; seconds: number; rps: number; p50Ms: number; p99Ms: number; errors: number }>;
}

/** The read mix: the routes a dashboard and an integrator poll, over the workload's data. */
export function readRequests(trackingIds: readonly string[], gateways: readonly string[]): autocannon.Request[] {
  const tid = (i: number) => trackingIds[i % trackingIds.length] ?? 'trk-1';
  const gw = (i: number) => gateways[i % gateways.length] ?? '';
  const paths = [
    '/v1/health',
    '/v1/events?limit=20',
    `/v1/events?trackingId=${tid(1)}`,
    '/v1/events/count?eventName=PaymentRecord',
    '/v1/events/payments?limit=20',
    `/v1/events/payments?gateway=${gw(0)}&limit=10`,
    '/v1/events/payments/stats',
    '/v1/events/names',
    `/v1/subscriptions?trackingId=${tid(2)}`,
    `/v1/payment-policies?trackingId=${tid(3)}`,
    `/v1/composable-policies?trackingId=${tid(4)}`,
    `/v1/onetime/${tid(5)}`,
    '/v1/events/typed/PaymentRecord?limit=10',
    `/v1/events/gateways/created?limit=10`,
    '/v1/jwks',
  ];
  return paths.map((path) => ({ method: 'GET', path }));
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function startReadLoad(url: string, requests: autocannon.Request[], opts: { connections: number; rate: number }): ReadLoad {
  const buckets = new Map<number, Bucket>();
  const bucket = (): Bucket => {
    const s = Math.floor(Date.now() / 1000);
    let b = buckets.get(s);
    if (!b) { b = { ok: 0, client4xx: 0, limited: 0, server5xx: 0, failed: 0, latencyMs: [] }; buckets.set(s, b); }
    return b;
  };
  const started = Date.now();
  let result: autocannon.Result | undefined;
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => { finished = resolve; });
  // with a callback autocannon returns its instance (events, stop) rather than a promise
  const instance = autocannon({
    url, connections: opts.connections, duration: 3600, timeout: 10, requests,
    ...(opts.rate > 0 ? { overallRate: opts.rate } : {}),
  }, (_err, r) => { result = r; finished(); });
  instance.on('response', (_client, status, _bytes, ms) => {
    const b = bucket();
    if (status >= 500) b.server5xx += 1;
    else if (status === 429) b.limited += 1;
    else if (status >= 400) b.client4xx += 1;
    else b.ok += 1;
    b.latencyMs.push(ms);
  });
  instance.on('reqError', () => { bucket().failed += 1; });

  const collect = (from: number, to: number): WindowStats => {
    const s: WindowStats = { requests: 0, errors: 0, errorRate: 0, server5xx: 0, failed: 0, limited: 0, client4xx: 0, p99Ms: 0 };
    const lat: number[] = [];
    for (const [sec, b] of buckets) {
      if (sec * 1000 < from || sec * 1000 >= to) continue;
      s.requests += b.ok + b.client4xx + b.limited + b.server5xx + b.failed;
      s.server5xx += b.server5xx;
      s.failed += b.failed;
      s.limited += b.limited;
      s.client4xx += b.client4xx;
      lat.push(...b.latencyMs);
    }
    s.errors = s.server5xx + s.failed;
    s.errorRate = s.requests === 0 ? 0 : s.errors / s.requests;
    s.p99Ms = percentile(lat.sort((a, b) => a - b), 99);
    return s;
  };

  return {
    window: collect,
    async stop() {
      instance.stop();
      await done;
      const all = collect(0, Number.MAX_SAFE_INTEGER);
      const seconds = (Date.now() - started) / 1000;
      return {
        requests: all.requests, seconds, rps: all.requests / seconds,
        p50Ms: result?.latency.p50 ?? 0, p99Ms: result?.latency.p99 ?? 0, errors: all.errors,
      };
    },
  };
}
