/**
 * The exact facilitator's fee payer, for the administrator (x-admin-key):
 * - POST /v1/admin/x402/fee-payer/rotate: a new active fee payer for the service's network;
 *   the old one still co-signs payments built for it for X402_EXACT_FEE_PAYER_GRACE_SECONDS
 *   (every node reads the keys again within seconds), then never signs a payment again. Its
 *   key stays sealed in the database and its SOL on it (no sweep yet).
 * - GET /v1/admin/x402/fee-payers: every fee payer with its SOL and the low-balance flag.
 */
import type { Config } from '../../../src/kernel/config/config.js';
import type { Clock } from '../../../src/kernel/domain/clock.js';
import type { Db } from '../../../infra/postgres/database.js';
import type { Api } from '../../../infra/http/routes.js';
import type { RpcClient } from '../../../infra/solana/rpc-client.js';
import type { JsonSchema } from '../../../src/kernel/http/schema.js';
import { requireAdminKey } from '../../../src/kernel/auth/admin-key.js';
import { rotateFeePayer } from './fee-payers.js';
import { feePayerReport } from './report.js';

const ADMIN_ERRORS = {
  401: { description: 'x-admin-key missing or wrong' },
  403: { description: 'admin API disabled: ADMIN_API_KEY is not configured' },
};

const rotationSchema: JsonSchema = {
  type: 'object',
  required: ['message', 'network', 'newFeePayer', 'oldFeePayer', 'gracePeriodEndsAt'],
  properties: {
    message: { type: 'string' },
    network: { type: 'string', description: 'CAIP-2 network' },
    newFeePayer: { type: 'string', description: 'the active fee payer now: /v1/x402/supported lists it as extra.feePayer' },
    oldFeePayer: { type: 'string', description: 'still co-signs until gracePeriodEndsAt; its SOL stays on it' },
    gracePeriodEndsAt: { type: 'string', format: 'date-time' },
  },
};

const listSchema: JsonSchema = {
  type: 'object',
  required: ['feePayers'],
  properties: {
    feePayers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['network', 'address', 'active', 'retiresAt', 'lamports', 'low'],
        properties: {
          network: { type: 'string' }, address: { type: 'string' }, active: { type: 'boolean' },
          retiresAt: { type: ['string', 'null'], format: 'date-time' },
          lamports: { type: ['integer', 'null'], description: 'null: the chain did not answer' },
          low: { type: 'boolean', description: 'active and below X402_EXACT_FEE_PAYER_MIN_LAMPORTS' },
        },
      },
    },
  },
};

export interface ExactAdminDeps {
  db: Db;
  rpc: RpcClient;
  clock: Clock;
  config: Pick<Config, 'keys' | 'solana' | 'x402'>;
}

export function registerExactAdminRoutes(api: Api, ctx: ExactAdminDeps): void {
  const admin = requireAdminKey(ctx.config.keys.adminApiKey);
  const { network } = ctx.config.solana;

  api.route({
    method: 'post',
    path: '/v1/admin/x402/fee-payer/rotate',
    summary: 'Rotate the x402 exact fee payer',
    description: 'Requires x-admin-key. A new fee payer key (fund it with SOL); the old one co-signs payments built for it during X402_EXACT_FEE_PAYER_GRACE_SECONDS, then it signs no payment.',
    tags: ['admin'],
    security: [{ AdminApiKey: [] }],
    before: [admin],
    responses: { 200: { description: 'rotated', schema: rotationSchema }, ...ADMIN_ERRORS, 503: { description: 'database unreachable' } },
    async handler() {
      const nowMs = ctx.clock.now();
      const r = await rotateFeePayer(ctx.db, { network, nowMs, encryptionKey: ctx.config.keys.encryptionKey, graceSeconds: ctx.config.x402.exact.feePayerGraceSeconds });
      const ends = r.gracePeriodEndsAt.toISOString();
      return {
        body: {
          message: `x402 exact fee payer rotated on ${network}: fund ${r.newFeePayer} with SOL; ${r.oldFeePayer} co-signs until ${ends}`,
          network, newFeePayer: r.newFeePayer, oldFeePayer: r.oldFeePayer, gracePeriodEndsAt: ends,
        },
      };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/admin/x402/fee-payers',
    summary: 'The x402 exact fee payers and their SOL',
    tags: ['admin'],
    security: [{ AdminApiKey: [] }],
    before: [admin],
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'fee payers, active first', schema: listSchema }, ...ADMIN_ERRORS },
    async handler() {
      const rows = await feePayerReport(ctx.db, ctx.rpc, ctx.config.x402.exact.feePayerMinLamports);
      return { body: { feePayers: rows.map((r) => ({ ...r, retiresAt: r.retiresAt?.toISOString() ?? null })) } };
    },
  });
}
