/**
 * Key rotation, shared by POST /v1/admin/keys/rotate and `tributary keys rotate`: rotate
 * in Postgres, then tell every node through Redis pub/sub so each drops its key cache and
 * signs with the new key at once (the cache's short TTL covers a lost message).
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Db } from '../postgres/database.js';
import { ConfigError } from '../../src/kernel/config/config.js';
import type { Logger } from '../log/logger.js';
import { rotateSigningKey, type RotationResult } from './store.js';
import { rotationChannelKey } from '../../src/kernel/names/index.js';

/** What the key store works with: the primary, Redis for the rotation broadcast, the key settings. */
export interface KeyStoreDeps { config: Config; db: Db; redis: Redis; logger: Logger; clock: Clock }

export const rotationChannel = (config: Config): string => rotationChannelKey(config.redis.prefix);

/** Every kind of secret SIGNING_KEY_ENCRYPTION_KEY seals at rest, as the development banner names them. */
export const SEALED_SECRET_KINDS = [
  'JWT signing keys', 'scheduler signer secrets', 'webhook signing secrets (current and previous)', 'x402 exact fee payer keys',
] as const;

/**
 * Secrets are encrypted at rest; without SIGNING_KEY_ENCRYPTION_KEY the service refuses
 * to make or use them unless development mode is set explicitly, and then says so, naming
 * every kind. Setting the key later seals what was kept in the clear (src/app/secrets.ts).
 */
export function assertKeyConfig(config: Config, logger: Logger): void {
  if (config.keys.encryptionKey) return;
  if (!config.keys.devMode) {
    throw new ConfigError(['SIGNING_KEY_ENCRYPTION_KEY: required to encrypt signing keys at rest (32 bytes, hex or base64); set TRIBUTARY_DEV_MODE=true to run without it in development']);
  }
  logger.warn(`!!! DEVELOPMENT MODE: SIGNING_KEY_ENCRYPTION_KEY is not set, so these secrets are stored UNENCRYPTED: ${SEALED_SECRET_KINDS.join(', ')}. Never run this in production; set the key and they are sealed at the next start (or by \`tributary keys seal\`). !!!`);
}

export interface RotateKeysOutput extends RotationResult { message: string }

/** `tributary keys rotate`: the same rotation as the admin route, from the shell. */
export async function rotateKeys(ctx: KeyStoreDeps): Promise<RotateKeysOutput> {
  assertKeyConfig(ctx.config, ctx.logger);
  const result = await rotateSigningKey(ctx.db, {
    nowMs: ctx.clock.now(),
    encryptionKey: ctx.config.keys.encryptionKey,
    graceSeconds: ctx.config.keys.gracePeriodSeconds,
  });
  // Best effort: a node that misses the message still reloads within the cache TTL.
  await ctx.redis.publish(rotationChannel(ctx.config), result.newKid).catch((err: Error) =>
    ctx.logger.warn({ err: err.message }, 'key rotation not broadcast; nodes will reload keys within the cache TTL'));
  ctx.logger.info({ newKid: result.newKid, oldKid: result.oldKid, gracePeriodEndsAt: result.gracePeriodEndsAt.toISOString() }, 'signing key rotated');
  return { ...result, message: `signing key rotated: ${result.oldKid} stays published until ${result.gracePeriodEndsAt.toISOString()}` };
}
