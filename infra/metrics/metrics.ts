/**
 * Prometheus metrics of one process (prom-client), on a registry of its own rather than
 * the library's global one. Figures that live in shared state (projection lag, stream
 * length, dead letters, webhook outcomes, indexer slot lag) are read at scrape time by
 * the API node's /metrics, so one scrape of any node shows the whole cluster's spine.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  socketConnections: Gauge;
  /** read cache outcomes: hit, miss, shared (a concurrent miss's answer), bypass (Redis away) */
  readCache: Counter<'result'>;
  /** where the socket gauge reads its figure at scrape time (the Socket.IO node sets it) */
  socketSource: { count?: () => number };
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const socketSource: { count?: () => number } = {};
  collectDefaultMetrics({ register: registry, prefix: 'tributary_process_' });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'tributary_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    socketConnections: new Gauge({
      name: 'tributary_socketio_connections', help: 'Socket.IO connections on this node', registers: [registry],
      collect() { if (socketSource.count) this.set(socketSource.count()); },
    }),
    readCache: new Counter({ name: 'tributary_read_cache_requests_total', help: 'cached list routes by outcome', labelNames: ['result'], registers: [registry] }),
    socketSource,
  };
}
