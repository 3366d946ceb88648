/**
 * The merchant dashboard, served by every API node: the page from web/dashboard (its HTML,
 * and its script and stylesheet bundled as infra/http/web-assets.ts says) and the Socket.IO
 * browser client (from the socket.io-client package, read once). No CDN at run time; a
 * Content-Security-Policy limits the page to this origin.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Api } from '../../infra/http/routes.js';
import { PAGE_CSP, registerWebPage } from '../../infra/http/web-assets.js';
import { base58Key } from '../../src/kernel/http/schema.js';

function readSocketIoClient(): string {
  // the package's exports hide dist/: found next to its entry point (build/cjs/index.js)
  const entry = createRequire(import.meta.url).resolve('socket.io-client');
  return readFileSync(path.join(path.dirname(entry), '..', '..', 'dist', 'socket.io.min.js'), 'utf8');
}

const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} };

export function registerDashboardRoutes(api: Api): void {
  registerWebPage(api, {
    page: 'dashboard', path: '/dashboard', tags: ['dashboard'],
    summary: 'The merchant dashboard (HTML): sign in with a gateway JWT or a wallet',
    query: { type: 'object', additionalProperties: false, properties: { gateway: { ...base58Key, description: 'fills in the sign-in form' } } },
  });
  let socketClient: string | undefined; // read on first request, then kept by this node
  const contentType = 'text/javascript; charset=utf-8';
  const summary = 'The Socket.IO browser client the dashboard uses';
  api.route({
    method: 'get', path: '/dashboard/socket.io.min.js', summary, tags: ['dashboard'], query: NO_QUERY,
    responses: { 200: { description: summary, contentType } },
    handler: () => Promise.resolve({
      body: (socketClient ??= readSocketIoClient()), contentType,
      headers: { 'Cache-Control': 'public, max-age=3600', 'Content-Security-Policy': PAGE_CSP, 'X-Content-Type-Options': 'nosniff' },
    }),
  });
}
