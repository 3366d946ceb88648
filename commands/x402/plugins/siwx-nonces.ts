/**
 * Where Sign-In-With-X nonces are spent (siwx.ts): a signed message is answered once, so its
 * nonce is recorded when it is answered and a copy of the message is refused for as long as
 * the message could still be accepted.
 *
 * A nonce is spent per wallet: it is the signer's replay guard, not a name the service owns.
 * Keyed by the nonce alone, anyone who read a challenge could spend its nonce with a wallet of
 * their own first, and the payer's sign-in would be refused as a replay.
 *
 * Two stores (spend-once.ts):
 *   - Postgres (the service's: migration 1016): the spent nonce outlives a Redis restart or
 *     failover, which forgets every key (Redis keeps nothing on disk here), and with it every
 *     nonce a copied message could have been refused by;
 *   - Redis (SET NX, the default of a middleware built without the service's database): shared
 *     by every node, but a Redis that loses its data lets a copy of a message still within its
 *     age be answered again, with a fresh JWT for the wallet's policy.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../../../infra/postgres/database.js';
import { postgresSpendOnce, redisSpendOnce, type SpendOnce } from '../spend-once.js';

/** spend(wallet, nonce, seconds) */
export type SignInNonces = SpendOnce;

export const redisSignInNonces = (redis: Redis, prefix: string): SignInNonces => redisSpendOnce(redis, `${prefix}x402:siwx:nonce:`);

export const postgresSignInNonces = (db: Db): SignInNonces => postgresSpendOnce(db, { table: 'x402_siwx_nonces', owner: 'wallet', token: 'nonce' });
