/**
 * The API node's HTTP server: explicit timeouts, and a graceful close that stops
 * accepting, lets requests in flight finish, then ends idle keep-alive sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from './context.js';
import { createHttpApp } from './http-app.js';
import { ROUTE_MODULES } from './route-modules.js';
import { buildNode, type AppNode, type RouteModule, type ServerAttachment } from './node.js';
import { metricsExposure, startMetricsServer } from '../../infra/http/metrics-route.js';

export interface ApiServer {
  server: Server;
  port: number;
  url: string;
  /** the METRICS_PORT listener's port, when it is on */
  metricsPort?: number;
  /** what the node built once and shares among its routes (the key ring, say) */
  node: AppNode;
  close(): Promise<void>;
}

/** Hooks that attach to the raw server (Socket.IO) and are closed with it. */
export type { ServerAttachment };

export async function startApiServer(
  ctx: AppContext,
  opts: { port?: number; host?: string; modules?: readonly RouteModule[]; attachments?: readonly ServerAttachment[] } = {},
): Promise<ApiServer> {
  const node = buildNode(ctx);
  // plaintext secrets sealed (with a key), and those that do not open logged, before serving
  await node.secrets.start();
  const { handler } = createHttpApp(node, opts.modules ?? ROUTE_MODULES);
  const server = createServer(handler);
  server.requestTimeout = ctx.config.http.requestTimeoutMs;
  server.headersTimeout = Math.min(ctx.config.http.requestTimeoutMs, 60_000);
  server.keepAliveTimeout = 65_000;
  const attached: { close(): Promise<void> }[] = [];
  for (const attach of opts.attachments ?? []) attached.push(await attach(server, node));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? ctx.config.http.port, opts.host ?? ctx.config.http.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const { metrics: m } = ctx.config;
  const metricsServer = m.port !== 0 ? await startMetricsServer(node.metrics.registry, m) : undefined;
  const exposed = metricsExposure(m, opts.host ?? ctx.config.http.host);
  if (exposed) ctx.logger.warn(exposed);
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    ...(metricsServer ? { metricsPort: metricsServer.port } : {}),
    node,
    async close() {
      await metricsServer?.close();
      for (const a of attached) await a.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5000).unref();
      });
      // the served marks of the last requests, before the database goes (else they are served and never charged)
      await Promise.all([node.x402.usage?.ahead?.release(), node.x402.credits?.ahead?.release()]);
      await Promise.all([node.x402.usage?.flush(), node.x402.credits?.flush()]);
      await node.keyRing.close();
    },
  };
}
