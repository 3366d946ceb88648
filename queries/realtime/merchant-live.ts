/**
 * Live payments for the merchant dashboard: the Socket.IO namespace /merchant on the
 * same server as /ws/v1's default namespace. A socket authenticates in its handshake
 * (`auth: {gateway, token}` with the gateway JWT, `{gateway, apiKey}` with one of the
 * gateway's API keys, or `{gateway, adminKey}`), then sits in its gateway's room; the
 * notifier emits every payment there as well as to its trackingId's room, through the
 * same Redis adapter. No catch-up here: the dashboard reads the latest payments over HTTP
 * and appends what arrives.
 *
 * A feed lasts only as long as its credential (checked at connection alone, a revoked key
 * or an expired token kept receiving revenue forever):
 *   - a token's feed ends at its exp (a timer per socket);
 *   - a key's feed ends when the key is revoked: the revoking node publishes on
 *     credentialRevokedChannel, and every node ends the sockets in that key's room;
 *   - every WS_AUTH_RECHECK_SECONDS each node checks every feed's credential again (the
 *     key not revoked, the wallet behind a token or key still the gateway's authority or
 *     signer, the gateway active), which bounds a lost announcement and a signer change.
 * An ended feed gets `error {code, message}` (credential_revoked, token_expired,
 * unauthorized), then a server disconnect (no automatic reconnection; a new handshake
 * with the same credential is refused).
 */
import type { Namespace, Server, Socket } from 'socket.io';
import type { Redis } from 'ioredis';
import { adminKeyMatches } from '../../src/kernel/auth/admin-key.js';
import { checkGatewayWallet, verifyGatewayToken, type CurrentGatewayKeys, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import type { ApiKeyLookup } from '../../src/kernel/auth/api-key-lookup.js';
import { AppError } from '../../src/kernel/http/errors.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { credentialRevokedChannel } from '../../src/kernel/names/index.js';
import type { Logger } from '../../infra/log/logger.js';

export const MERCHANT_NAMESPACE = '/merchant';
export const gatewayRoom = (gateway: string): string => `gateway:${gateway}`;
/** the sockets opened with one API key (by its public id): what a revocation ends */
export const apiKeyRoom = (id: string): string => `api-key:${id}`;

/** setTimeout's largest delay; a later exp is waited for in steps */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface HandshakeAuth { gateway?: unknown; token?: unknown; apiKey?: unknown; adminKey?: unknown }

type Credential =
  | { kind: 'token'; signer: string; expiresAt: number | undefined; issuedAt: number | undefined }
  | { kind: 'apiKey'; id: string; presented: string; createdBy: string | null }
  | { kind: 'admin' };

interface FeedData { gateway: string; credential: Credential; timer?: NodeJS.Timeout }

export interface MerchantLiveDeps {
  verifier: TokenVerifier;
  adminKey: string | undefined;
  keys: CurrentGatewayKeys;
  apiKeys: ApiKeyLookup;
  /** a connection of its own is duplicated from it for the revocation channel */
  redis: Redis;
  prefix: string;
  recheckMs: number;
  clock: Clock;
  logger: Logger;
}

export interface MerchantLive { close(): Promise<void> }

/** Why a credential does not (or no longer) admit a feed; undefined when it does. */
async function credentialProblem(deps: MerchantLiveDeps, gateway: string, c: Credential): Promise<{ code: string; message: string } | undefined> {
  try {
    if (c.kind === 'admin') return undefined;
    if (c.kind === 'token') {
      if (c.expiresAt !== undefined && c.expiresAt * 1000 <= deps.clock.now()) return { code: 'token_expired', message: 'the gateway JWT has expired; sign in again' };
      await checkGatewayWallet(deps.keys, gateway, c.signer, { ...(c.issuedAt !== undefined ? { issuedAt: c.issuedAt } : {}) });
      return undefined;
    }
    const owner = await deps.apiKeys(c.presented);
    if (owner?.gateway !== gateway) return { code: 'credential_revoked', message: 'the API key was revoked' };
    await checkGatewayWallet(deps.keys, gateway, owner.createdBy ?? undefined);
    return undefined;
  } catch (err) {
    // the gateway's keys could not be read (chain and read model down): keep the feed, check again later
    if (err instanceof AppError && err.kind === 'upstream_unavailable') return undefined;
    return { code: 'unauthorized', message: (err as Error).message };
  }
}

function end(socket: Socket, problem: { code: string; message: string }): void {
  const data = socket.data as Partial<FeedData>;
  if (data.timer) clearTimeout(data.timer);
  socket.emit('error', problem);
  socket.disconnect();
}

/** Ends the feed at the token's exp. */
function expireAt(deps: MerchantLiveDeps, socket: Socket, expiresAt: number): void {
  const data = socket.data as FeedData;
  const wait = expiresAt * 1000 - deps.clock.now();
  data.timer = setTimeout(() => {
    if (expiresAt * 1000 > deps.clock.now()) { expireAt(deps, socket, expiresAt); return; }
    end(socket, { code: 'token_expired', message: 'the gateway JWT has expired; sign in again' });
  }, Math.min(MAX_TIMER_MS, Math.max(0, wait)));
  data.timer.unref();
}

async function authenticate(deps: MerchantLiveDeps, gateway: string, auth: HandshakeAuth): Promise<Credential> {
  if (deps.adminKey && typeof auth.adminKey === 'string') {
    if (!adminKeyMatches(deps.adminKey, auth.adminKey)) throw new Error('unauthorized');
    return { kind: 'admin' };
  }
  if (typeof auth.apiKey === 'string') {
    const owner = await deps.apiKeys(auth.apiKey.trim());
    if (!owner) throw new Error('unauthorized');
    if (owner.gateway !== gateway) throw new Error('forbidden');
    await checkGatewayWallet(deps.keys, gateway, owner.createdBy ?? undefined);
    return { kind: 'apiKey', id: owner.id, presented: auth.apiKey.trim(), createdBy: owner.createdBy };
  }
  if (typeof auth.token !== 'string') throw new Error('unauthorized');
  const claims = await verifyGatewayToken(deps.verifier, auth.token);
  if (claims.gateway !== gateway) throw new Error('forbidden');
  await checkGatewayWallet(deps.keys, claims.gateway, claims.signer, claims);
  return { kind: 'token', signer: claims.signer, expiresAt: claims.expiresAt, issuedAt: claims.issuedAt };
}

/** What makes two feeds' checks the same check: the gateway and the credential presented. */
function checkKey(gateway: string, c: Credential): string {
  if (c.kind === 'token') return `${gateway}|token|${c.signer}|${c.expiresAt ?? ''}|${c.issuedAt ?? ''}`;
  if (c.kind === 'apiKey') return `${gateway}|apiKey|${c.presented}`;
  return `${gateway}|admin`;
}

/**
 * Checks every feed of this node once; those whose credential no longer holds end. Feeds
 * sharing a credential (a dashboard open in many tabs) share one check per pass.
 */
async function recheckAll(deps: MerchantLiveDeps, ns: Namespace): Promise<void> {
  const checked = new Map<string, { code: string; message: string } | undefined>();
  for (const socket of ns.sockets.values()) {
    const data = socket.data as Partial<FeedData>;
    if (!data.gateway || !data.credential) continue;
    const key = checkKey(data.gateway, data.credential);
    const problem = checked.has(key) ? checked.get(key) : await credentialProblem(deps, data.gateway, data.credential);
    checked.set(key, problem);
    if (problem && socket.connected) end(socket, problem);
  }
}

function listenForRevocations(deps: MerchantLiveDeps, ns: Namespace): Redis {
  const channel = credentialRevokedChannel(deps.prefix);
  const sub = deps.redis.duplicate();
  sub.on('error', (err: Error) => deps.logger.warn({ err: err.message }, 'revocation subscriber error'));
  sub.on('message', (ch: string, message: string) => {
    if (ch !== channel) return;
    let id: unknown;
    try { id = (JSON.parse(message) as { apiKey?: unknown }).apiKey; } catch { return; }
    if (typeof id !== 'string') return;
    // every node hears the announcement: each ends the key's sockets it holds
    const sockets = ns.in(apiKeyRoom(id)).local;
    sockets.emit('error', { code: 'credential_revoked', message: 'the API key was revoked' });
    sockets.disconnectSockets();
  });
  sub.subscribe(channel).catch((err: Error) => deps.logger.warn({ err: err.message }, 'revocation subscribe failed'));
  return sub;
}

export function attachMerchantLive(io: Server, deps: MerchantLiveDeps): MerchantLive {
  const ns = io.of(MERCHANT_NAMESPACE);
  ns.use((socket, next) => {
    const auth = socket.handshake.auth as HandshakeAuth;
    const gateway = typeof auth.gateway === 'string' && isPublicKey(auth.gateway) ? auth.gateway : undefined;
    if (gateway === undefined) { next(new Error('invalid_input: gateway')); return; }
    authenticate(deps, gateway, auth).then((credential) => {
      const data: FeedData = { gateway, credential };
      socket.data = data;
      next();
    }, (err: Error) => next(new Error(err.message === 'forbidden' ? 'forbidden' : 'unauthorized')));
  });
  ns.on('connection', (socket) => {
    const { gateway, credential } = socket.data as FeedData;
    void socket.join(gatewayRoom(gateway));
    if (credential.kind === 'apiKey') void socket.join(apiKeyRoom(credential.id));
    if (credential.kind === 'token' && credential.expiresAt !== undefined) expireAt(deps, socket, credential.expiresAt);
    socket.on('disconnect', () => {
      const timer = (socket.data as Partial<FeedData>).timer;
      if (timer) clearTimeout(timer);
    });
  });
  const sub = listenForRevocations(deps, ns);
  let checking = false;
  const rechecker = setInterval(() => {
    if (checking) return;
    checking = true;
    recheckAll(deps, ns).catch((err: Error) => deps.logger.warn({ err: err.message }, 'merchant feed recheck failed')).finally(() => { checking = false; });
  }, deps.recheckMs);
  rechecker.unref();
  return {
    async close() {
      clearInterval(rechecker);
      for (const socket of ns.sockets.values()) {
        const timer = (socket.data as Partial<FeedData>).timer;
        if (timer) clearTimeout(timer);
      }
      sub.disconnect();
    },
  };
}
