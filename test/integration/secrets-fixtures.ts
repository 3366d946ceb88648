/**
 * What the secrets-at-rest tests share: an API node as `serve --role api` builds it with its
 * log kept, and a database holding one secret of every kind, kept in plaintext (a
 * development run) or sealed under a given SIGNING_KEY_ENCRYPTION_KEY.
 */
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { sql } from 'kysely';
import type { TestEnv } from '../support/env.js';
import type { TestApi } from '../support/app.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import type { AppContext } from '../../src/app/context.js';
import { systemClock, type Clock } from '../../src/kernel/domain/clock.js';
import { startApiServer } from '../../src/app/api-server.js';
import { REDACT_PATHS, type Logger } from '../../infra/log/logger.js';
import { sealSecret } from '../../infra/crypto/secret-box.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';
import { newSigningSecret } from '../../commands/webhooks/delivery/signer.js';
import { delegateGateway, setGatewayState } from '../../commands/scheduler/signers.js';
import { ensureFeePayer } from '../../commands/x402/exact/fee-payers.js';
import { insertGateway, newWallet, postJson, signIn, type Wallet } from './auth-fixtures.js';

export const ADMIN = 'admin-secret-for-secrets-at-rest';
export const NETWORK = 'solana:secrets-at-rest';
/** The sealed secret columns: every one must be free of `plain:` after the upgrade. */
export const COLUMNS = [
  ['signing_keys', 'private_jwk'], ['scheduler_gateways', 'secret'], ['webhooks', 'secret'], ['webhooks', 'previous_secret'], ['x402_fee_payers', 'secret'],
] as const;

export interface Captured { logger: Logger; lines(): Record<string, unknown>[]; text(): string }

export function captureLogs(): Captured {
  const chunks: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
  const logger = pino({ level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  const text = () => chunks.join('');
  return { logger, text, lines: () => text().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** An API node as `tributary serve --role api` builds it, with its log kept. */
export async function startApi(env: TestEnv, overrides: Record<string, string>, logger: Logger = captureLogs().logger, clock: Clock = systemClock): Promise<TestApi> {
  const config = loadConfig({
    ...env.env, PORT: '0', HOST: '127.0.0.1', SOLANA_RPC_URL: 'http://127.0.0.1:1', ADMIN_API_KEY: ADMIN, ...overrides,
  });
  const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock };
  const server = await startApiServer(ctx, { port: 0, host: '127.0.0.1' });
  return { url: server.url, ctx, node: server.node, close: () => server.close() };
}

export const DEV = { TRIBUTARY_DEV_MODE: 'true', SIGNING_KEY_ENCRYPTION_KEY: '' };
export const withKey = (key: string, previous: readonly string[] = []) => ({
  TRIBUTARY_DEV_MODE: 'false', SIGNING_KEY_ENCRYPTION_KEY: key, SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: previous.join(','),
});

export async function plainCount(env: TestEnv): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [table, column] of COLUMNS) {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} LIKE 'plain:%'`.execute(env.db);
    out[`${table}.${column}`] = Number(rows[0]!.n);
  }
  return out;
}

export const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

export const kidOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

/** One secret of every kind: a gateway with a token, a webhook with two secrets, a signer, a fee payer. */
export interface SeededSecrets { owner: Wallet; gateway: string; token: string; kid: string; webhookId: number; secret: string; previous: string; feePayer: string }

/**
 * A node run under `key` (hex), or in development mode without one, leaving a secret of
 * every kind sealed under that key (or in plaintext).
 */
export async function seedSecrets(env: TestEnv, key: string | undefined, logger?: Logger): Promise<SeededSecrets> {
  const encryptionKey = key === undefined ? undefined : Buffer.from(key, 'hex');
  const node = await startApi(env, key === undefined ? DEV : withKey(key), logger);
  try {
    const owner = await newWallet();
    const gateway = await insertGateway(env.db, owner.address);
    const { token } = await signIn(node.url, gateway, owner);
    const res = await postJson(`${node.url}/v1/webhooks`, { gateway_pubkey: owner.address, endpoint_url: 'https://8.8.8.8/hook' }, { 'x-admin-key': ADMIN });
    expect(res.status, await res.clone().text()).to.equal(201);
    const created = (await res.json()) as { id: number; secret: string };
    // a rotation of the webhook's secret: the rotated-out one is kept, and still signs
    const secret = newSigningSecret();
    await env.db.updateTable('webhooks').set({
      previous_secret: (eb) => eb.ref('secret'), previous_secret_until: new Date(Date.now() + 3_600_000), secret: sealSecret(secret, secretAad(created.id), encryptionKey),
    }).where('id', '=', created.id).execute();
    await delegateGateway(env.db, { gateway, authority: owner.address, encryptionKey });
    await setGatewayState(env.db, gateway, 'active');
    const { address: feePayer } = await ensureFeePayer(env.db, { network: NETWORK, nowMs: Date.now(), encryptionKey });
    return { owner, gateway, token, kid: kidOf(token), webhookId: created.id, secret, previous: created.secret, feePayer };
  } finally {
    await node.close();
  }
}
