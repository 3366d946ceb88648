/**
 * A node's view of the signing keys: signs with the active key, verifies against the
 * active key and those in their grace period, publishes the JWKS. The keys are cached
 * for a few seconds and dropped at once when any node announces a rotation on Redis
 * pub/sub, so every node follows a rotation within moments.
 *
 * The composition root makes one ring per API node and hands it to whoever signs or
 * verifies (the signing routes, gateway auth, the x402 middleware, Socket.IO), so they
 * share its cache and its single subscriber connection.
 *
 * Publishing and verifying read the public halves only. The active private key is opened
 * (unsealed) when something is signed, and kept; when it does not open (a wrong
 * SIGNING_KEY_ENCRYPTION_KEY, a tampered row) signing answers 503 with the reason, the
 * failure is remembered for KEY_OPEN_RETRY_MS, and the JWKS and verification go on.
 */
import { randomUUID } from 'node:crypto';
import { decodeJwt, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWTPayload, type JWTHeaderParameters } from 'jose';
import { upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { KeyMaterialError, openPrivateJwk, SIGNING_ALG, type PublicJwk } from './crypto.js';
import { ensureActiveKey, loadPublishedKeys, type StoredKey } from './store.js';
import { assertKeyConfig, rotateKeys, rotationChannel, type KeyStoreDeps, type RotateKeysOutput } from './rotate.js';

/** How long a node trusts its cached key set without hearing of a rotation. */
export const KEY_CACHE_TTL_MS = 5000;

/** How long a private key that did not open is not tried again (every sign() meanwhile answers 503 at once). */
export const KEY_OPEN_RETRY_MS = 5000;

/** Whether the active key's private half opens, and why not. */
export type SigningKeyStatus = { kid: string; ok: true } | { kid: string; ok: false; reason: string };

/**
 * A token naming a kid this node has not seen forces a reload at most this often. The kid
 * is read before any signature check, so made-up kids cost nothing to send: without the
 * bound each one was a database round trip.
 */
export const UNKNOWN_KID_RELOAD_MS = 1000;

/**
 * nbf lies this far before iat. Verifiers compare whole seconds with their own clock: a node
 * (or a merchant's verifier) a few hundred milliseconds behind the issuing one saw a token
 * just issued as not yet valid, and a payer who paid on one node was refused by the next.
 * A token cannot be used before it exists, so dating nbf back costs nothing.
 */
export const NOT_BEFORE_SKEW_SECONDS = 30;

export interface SignOptions {
  subject: string;
  /** unix seconds */
  expiresAt: number;
  /** the token's aud; default JWT_AUDIENCE (an array: several, any of which a verifier may ask for) */
  audience?: string | string[];
}

export interface SignedToken { token: string; kid: string; jti: string; issuedAt: number; expiresAt: number }

export interface KeyRing {
  /** JWT_AUDIENCE: the aud of tokens signed without `audience`, and what purpose audiences narrow */
  readonly audience: string;
  /** Signs `claims` with the active key, adding iss, aud, sub, iat, nbf, exp and jti. */
  sign(claims: Record<string, unknown>, opts: SignOptions): Promise<SignedToken>;
  /**
   * Verifies signature (active or in-grace key), iss, aud, exp, nbf at the injected clock.
   * `acceptExpired`: every check but exp, for a caller that only looks up what a token
   * already bought and never grants anything new on it.
   */
  verify(token: string, opts?: { audience?: string | string[]; acceptExpired?: boolean }): Promise<JWTPayload>;
  /** The published set: the active key and every key in its grace period. */
  jwks(): Promise<{ keys: PublicJwk[] }>;
  rotate(): Promise<RotateKeysOutput>;
  /**
   * Opens the active private key as sign() would (the same cache): whether it opens, and
   * the reason when it does not (health, the start check). Throws only when the key store
   * cannot be read at all (503).
   */
  signingKeyStatus(): Promise<SigningKeyStatus>;
  /** Makes the first key when there is none; run at start. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

interface Snapshot { keys: StoredKey[]; active: { kid: string; sealed: string }; loadedAt: number }

/** The active private key as last opened, or why it did not open (until retryAt). */
type Opened =
  | { kid: string; sealed: string; key: CryptoKey }
  | { kid: string; sealed: string; reason: string; retryAt: number };

export function createKeyRing(ctx: KeyStoreDeps): KeyRing {
  assertKeyConfig(ctx.config, ctx.logger);
  const { config, clock } = ctx;
  let snapshot: Snapshot | undefined;
  let inflight: Promise<Snapshot> | undefined;
  // Bumped by every invalidation: a load that began before it is used once, never cached.
  let generation = 0;
  const publicKeys = new Map<string, CryptoKey>();
  let forcedAt = Number.NEGATIVE_INFINITY;
  let opened: Opened | undefined;
  let opening: Promise<Opened> | undefined;

  const channel = rotationChannel(config);
  const sub = ctx.redis.duplicate();
  sub.on('error', (err: Error) => ctx.logger.warn({ err: err.message }, 'key rotation subscriber error'));
  sub.on('message', (ch: string) => { if (ch === channel) invalidate(); });
  sub.subscribe(channel).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'key rotation subscribe failed'));
  // The subscriber lives no longer than the Redis client it was duplicated from.
  ctx.redis.once('end', () => sub.disconnect());

  function invalidate(): void {
    generation += 1;
    snapshot = undefined;
  }

  async function current(force = false): Promise<Snapshot> {
    if (!force && snapshot && clock.now() - snapshot.loadedAt < KEY_CACHE_TTL_MS) return snapshot;
    if (inflight) return inflight;
    const gen = generation;
    inflight = loadSnapshot(ctx)
      .then((s) => {
        if (gen === generation) snapshot = s;
        return s;
      })
      .catch((err: unknown) => {
        ctx.logger.error({ err }, 'signing keys unavailable');
        throw upstreamUnavailable('signing keys unavailable');
      })
      .finally(() => { inflight = undefined; });
    return inflight;
  }

  const live = (k: StoredKey, now: number): boolean => k.retiresAt === null || k.retiresAt.getTime() > now;

  async function publicKeyFor(header: JWTHeaderParameters): Promise<CryptoKey> {
    const kid = header.kid;
    if (header.alg !== SIGNING_ALG || typeof kid !== 'string') throw new Error('unexpected token header');
    const now = clock.now();
    let found = (await current()).keys.find((k) => k.kid === kid && live(k, now));
    // A kid we have not seen may come from a rotation on another node a moment ago; a reload
    // within the last UNKNOWN_KID_RELOAD_MS has seen any such rotation already.
    if (!found && now - forcedAt >= UNKNOWN_KID_RELOAD_MS) {
      forcedAt = now;
      found = (await current(true)).keys.find((k) => k.kid === kid && live(k, now));
    }
    if (!found) throw new Error(`unknown or retired key ${kid}`);
    let key = publicKeys.get(kid);
    if (!key) {
      key = (await importJWK({ ...found.publicJwk }, SIGNING_ALG)) as CryptoKey;
      publicKeys.set(kid, key);
    }
    return key;
  }

  /** The active key opened, or why not; one attempt at a time, a failure kept for KEY_OPEN_RETRY_MS. */
  async function openActive(): Promise<Opened> {
    const { active } = await current();
    const known = opened;
    if (known && known.kid === active.kid && known.sealed === active.sealed
      && ('key' in known || clock.now() < known.retryAt)) return known;
    opening ??= openKey(active, known).then((o) => { opened = o; return o; }).finally(() => { opening = undefined; });
    return opening;
  }

  async function openKey(active: Snapshot['active'], before: Opened | undefined): Promise<Opened> {
    try {
      const jwk = openPrivateJwk(active.sealed, active.kid, config.keys.encryptionKey);
      return { ...active, key: (await importJWK(jwk, SIGNING_ALG)) as CryptoKey };
    } catch (err) {
      const why = err instanceof KeyMaterialError ? err.reason : 'the stored private key is not an ES256 key';
      const reason = `signing key ${active.kid} cannot be opened: ${why}`;
      // once per key and reason, not at every retry
      const again = before !== undefined && 'reason' in before && before.reason === reason && before.sealed === active.sealed;
      if (!again) ctx.logger.error({ kid: active.kid, reason }, 'the active signing key cannot be opened: tokens are not issued; the JWKS and verification go on');
      return { ...active, reason, retryAt: clock.now() + KEY_OPEN_RETRY_MS };
    }
  }

  return {
    audience: config.keys.audience,
    async sign(claims, opts) {
      const active = await openActive();
      if (!('key' in active)) throw upstreamUnavailable(`signing keys unavailable: ${active.reason}`);
      return signToken(ctx, active, claims, opts);
    },
    async signingKeyStatus() {
      const active = await openActive();
      return 'key' in active ? { kid: active.kid, ok: true } : { kid: active.kid, ok: false, reason: active.reason };
    },
    async verify(token, opts = {}) {
      const now = clock.now();
      const { payload } = await jwtVerify(token, publicKeyFor, {
        algorithms: [SIGNING_ALG],
        issuer: config.keys.issuer,
        audience: opts.audience ?? config.keys.audience,
        // jose cannot leave out exp alone: a token past it is checked as of its last valid second (nbf, iss, aud, signature as ever)
        currentDate: new Date(opts.acceptExpired === true ? Math.min(now, expiryMs(token) - 1000) : now),
      });
      return payload;
    },
    async jwks() {
      const now = clock.now();
      const { keys } = await current();
      return { keys: keys.filter((k) => live(k, now)).map((k) => ({ ...k.publicJwk })) };
    },
    async rotate() {
      try {
        return await rotateKeys(ctx);
      } catch (err) {
        ctx.logger.error({ err }, 'key rotation failed');
        throw upstreamUnavailable('key store unavailable: rotation not done');
      } finally {
        invalidate();
      }
    },
    async warmUp() {
      const { kid, created } = await ensureActiveKey(ctx.db, { nowMs: clock.now(), encryptionKey: config.keys.encryptionKey });
      if (created) ctx.logger.info({ kid }, 'first signing key created');
    },
    async close() {
      sub.disconnect();
    },
  };
}

/** The published keys (public halves) and the active key's sealed private half, left sealed; the first key is made when there is none. */
async function loadSnapshot(ctx: KeyStoreDeps): Promise<Snapshot> {
  const { config, clock } = ctx;
  const now = clock.now();
  let keys = await loadPublishedKeys(ctx.db, now);
  let active = keys.find((k) => k.retiresAt === null);
  if (!active?.sealedPrivate) {
    await ensureActiveKey(ctx.db, { nowMs: now, encryptionKey: config.keys.encryptionKey });
    keys = await loadPublishedKeys(ctx.db, now);
    active = keys.find((k) => k.retiresAt === null);
  }
  if (!active?.sealedPrivate) throw new Error('no active signing key after creating one');
  return { keys, active: { kid: active.kid, sealed: active.sealedPrivate }, loadedAt: now };
}

async function signToken(ctx: KeyStoreDeps, active: { kid: string; key: CryptoKey }, claims: Record<string, unknown>, opts: SignOptions): Promise<SignedToken> {
  const { config, clock } = ctx;
  const issuedAt = Math.floor(clock.now() / 1000);
  const jti = randomUUID();
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: SIGNING_ALG, kid: active.kid, typ: 'JWT' })
    .setIssuer(config.keys.issuer)
    .setAudience(opts.audience ?? config.keys.audience)
    .setSubject(opts.subject)
    .setIssuedAt(issuedAt)
    .setNotBefore(issuedAt - NOT_BEFORE_SKEW_SECONDS)
    .setExpirationTime(opts.expiresAt)
    .setJti(jti)
    .sign(active.key);
  return { token, kid: active.kid, jti, issuedAt, expiresAt: opts.expiresAt };
}

/** A token's exp in ms, read before it is verified (the signature check that follows vouches for it); none: Infinity. */
function expiryMs(token: string): number {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' ? exp * 1000 : Infinity;
  } catch {
    return Infinity; // not a JWT: the verification refuses it
  }
}
