/**
 * The merchant dashboard, served by every API node: the page, its stylesheet, its script
 * and the Socket.IO browser client (from the socket.io-client package, read once). No
 * CDN at run time; a Content-Security-Policy limits the page to this origin.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Api } from '../../infra/http/routes.js';
import { base58Key } from '../../src/kernel/http/schema.js';
import { DASHBOARD_HTML } from './page.js';
import { DASHBOARD_CSS } from './style.js';
import { DASHBOARD_JS } from './client.js';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function readSocketIoClient(): string {
  // the package's exports hide dist/: found next to its entry point (build/cjs/index.js)
  const entry = createRequire(import.meta.url).resolve('socket.io-client');
  return readFileSync(path.join(path.dirname(entry), '..', '..', 'dist', 'socket.io.min.js'), 'utf8');
}

const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} };

export function registerDashboardRoutes(api: Api): void {
  let socketClient: string | undefined; // read on first request, then kept by this node
  const socketIoClient = (): string => (socketClient ??= readSocketIoClient());
  const asset = (path: string, summary: string, contentType: string, body: () => string, maxAge: number, query = NO_QUERY) => {
    api.route({
      method: 'get', path, summary, tags: ['dashboard'], query,
      responses: { 200: { description: summary, contentType } },
      handler: () => Promise.resolve({
        body: body(), contentType,
        headers: { 'Cache-Control': `public, max-age=${maxAge}`, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' },
      }),
    });
  };
  asset('/dashboard', 'The merchant dashboard (HTML): sign in with a gateway JWT or a wallet', 'text/html; charset=utf-8', () => DASHBOARD_HTML, 0,
    { type: 'object', additionalProperties: false, properties: { gateway: { ...base58Key, description: 'fills in the sign-in form' } } });
  asset('/dashboard/app.css', "The dashboard's stylesheet", 'text/css; charset=utf-8', () => DASHBOARD_CSS, 300);
  asset('/dashboard/app.js', "The dashboard's script", 'text/javascript; charset=utf-8', () => DASHBOARD_JS, 300);
  asset('/dashboard/socket.io.min.js', 'The Socket.IO browser client the dashboard uses', 'text/javascript; charset=utf-8', socketIoClient, 3600);
}
