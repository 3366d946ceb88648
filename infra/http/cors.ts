/**
 * Which other origins may call the API from a browser (CORS_ORIGINS), and with which
 * request headers. The service keeps no cookies: every credential is a header a script
 * sets itself, so CORS decides only which sites' scripts may read the answers and send
 * those headers.
 *
 * - An origin named in CORS_ORIGINS (the service's own by default) is answered with its
 *   own origin and may send the headers of a signed-in caller: Authorization and
 *   x-api-key, besides the payment headers.
 * - `*` (set explicitly by the operator) answers any other origin with
 *   `Access-Control-Allow-Origin: *` and the credential-free headers only: public reads,
 *   the 402 flow (Payment, PAYMENT-SIGNATURE, SIGN-IN-WITH-X) and MCP's version header.
 * - `Access-Control-Allow-Credentials` is never sent, and `x-admin-key` is never allowed
 *   cross-origin, whatever the setting: the operator's key is sent from the operator's
 *   tools, never from a page of another site. The allowed headers are a fixed list; the
 *   headers a preflight asks for are never reflected.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { NodeMiddleware } from './cached-hits.js';

/** What a browser script on an allowed origin may read of an answer. */
export const CORS_EXPOSED_HEADERS = ['Payment-Required', 'Payment-Response', 'X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy'] as const;

/** Request headers any allowed origin may send: no credential of a signed-in caller. */
export const CORS_PUBLIC_HEADERS = ['Content-Type', 'Payment', 'Payment-Signature', 'Sign-In-With-X', 'X-Request-Id', 'Mcp-Protocol-Version'] as const;

/** Request headers an origin named in CORS_ORIGINS may send as well: a wallet's or gateway's token, a gateway's API key. */
export const CORS_CREDENTIAL_HEADERS = ['Authorization', 'X-Api-Key'] as const;

function addVaryOrigin(res: ServerResponse): void {
  const vary = res.getHeader('Vary');
  const now = vary === undefined ? [] : String(vary).split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (!now.some((v) => v === '*' || v.toLowerCase() === 'origin')) res.setHeader('Vary', [...now, 'Origin'].join(', '));
}

/** The HTTP API's CORS middleware for CORS_ORIGINS (already read as origins and `*`). */
export function crossOriginPolicy(origins: readonly string[]): NodeMiddleware {
  const any = origins.includes('*');
  const named = origins.filter((o) => o !== '*');
  const exposedHeaders = [...CORS_EXPOSED_HEADERS];
  const forNamed = cors({ origin: named, allowedHeaders: [...CORS_PUBLIC_HEADERS, ...CORS_CREDENTIAL_HEADERS], exposedHeaders, credentials: false });
  const forAny = cors({ origin: '*', allowedHeaders: [...CORS_PUBLIC_HEADERS], exposedHeaders, credentials: false });
  return (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
    const origin = req.headers.origin;
    if (any && !(origin !== undefined && named.includes(origin))) {
      // the answer depends on the origin when some origins are named as well
      if (named.length > 0) addVaryOrigin(res);
      forAny(req, res, next);
      return;
    }
    forNamed(req, res, next);
  };
}

/** Socket.IO's `cors` option for the same origins: its handshake carries no credential header. */
export function socketCorsOptions(origins: readonly string[]): { origin: string | string[]; methods: string[]; allowedHeaders: string[]; credentials: false } {
  return {
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST'],
    allowedHeaders: ['Content-Type'],
    credentials: false,
  };
}
