/**
 * The x402 facilitator's cost: POST /v1/x402/verify requests/s (API key, the
 * requirements normalized, every check) as a ratio to the middleware's local check (the
 * same payment engine's verify behind a bare route of the same app; goal ≥ 0.5), and
 * settle latency p50/p99 on the localnet (sequential settlements of fresh payments: send,
 * confirm, read back, sign the JWT).
 */
import autocannon from 'autocannon';
import { Keypair } from '@solana/web3.js';
import { createTestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { startLocalnet } from '../../infra/localnet/index.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { createApiKey } from '../../commands/api-keys/store.js';
import { localnetGateway } from '../../commands/x402/demo.js';
import { createPaymentEngine } from '../../commands/x402/engine.js';
import { registerFacilitatorRoutes } from '../../commands/x402/facilitator/routes.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { paymentPayloadFromJson } from '../../commands/x402/payload.js';
import { type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import type { RouteModule } from '../../src/app/node.js';
import { percentile, report } from './harness.js';

const SECONDS = Number(process.env['BENCH_X402_SECONDS'] ?? 4);
const CONNECTIONS = Number(process.env['BENCH_X402_CONNECTIONS'] ?? 32);
const ROUNDS = Number(process.env['BENCH_X402_ROUNDS'] ?? 2);
const SETTLES = Number(process.env['BENCH_X402_SETTLES'] ?? 40);

async function postLoad(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const r = await autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, connections: CONNECTIONS, duration: SECONDS, workers: 1 });
  if (r.non2xx > 0 || r.errors > 0) process.stdout.write(`  warning: ${url} had ${r.non2xx} non-2xx answers and ${r.errors} errors\n`);
  return r.requests.average;
}

export async function benchFacilitator(): Promise<void> {
  process.stdout.write('x402 facilitator\n');
  const seed = 'bench-facilitator';
  const env = await createTestEnv('bench_facilitator');
  const ln = await startLocalnet({ port: 0, seed, rate: 0 });
  try {
    const gw = localnetGateway(seed, ln.fixtures.programId);
    const resource = 'https://merchant.example/report';
    const r = normalizeRequirement({
      scheme: 'deferred', network: 'solana:localnet', amount: 1_000_000, recipient: gw.authority, gateway: gw.address,
      tokenMint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', resource,
    }, ln.fixtures.programId);
    const local: RouteModule = (api, node) => {
      const engine = createPaymentEngine(node.x402);
      api.route<Record<string, never>, Record<string, never>, { paymentPayload: unknown }>({
        method: 'post', path: '/bench/local-verify', summary: 'bench', tags: ['bench'], responses: { 200: { description: 'ok' } },
        body: { type: 'object', required: ['paymentPayload'], properties: { paymentPayload: { type: 'object' } } },
        async handler({ body }) {
          const p = paymentPayloadFromJson(body.paymentPayload);
          const v = p.ok ? engine.verify(p.payment, r, resource) : p;
          return { body: v.ok ? { isValid: true, payer: v.payer } : { isValid: false, invalidReason: v.reason } };
        },
      });
    };
    const api = await startTestApi(env, {
      SOLANA_RPC_URL: ln.rpcUrl, SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: seed, LOG_LEVEL: 'silent', X402_DEMO_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1000000000',
    }, { modules: [registerSigningRoutes, registerFacilitatorRoutes, local] });
    const { key } = await createApiKey(env.db, gw.address, 'bench', new Date(), null);
    const rpc = createRpcClient({ url: ln.rpcUrl, timeoutMs: 10_000 });
    const accepted: AcceptedRequirement = acceptedRequirement(r, resource);
    const freshPayload = async () => {
      const wallet = Keypair.generate();
      fundWallet(ln.chain, wallet.publicKey);
      return JSON.parse(Buffer.from((await buildPayment(accepted, { wallet, rpc })).header, 'base64').toString()) as unknown;
    };

    const payload = await freshPayload();
    const body = JSON.stringify({ paymentPayload: payload, paymentRequirements: accepted });
    const best = { local: 0, facilitator: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      best.local = Math.max(best.local, await postLoad(`${api.url}/bench/local-verify`, JSON.stringify({ paymentPayload: payload }), {}));
      best.facilitator = Math.max(best.facilitator, await postLoad(`${api.url}/v1/x402/verify`, body, { 'x-api-key': key }));
    }
    report({ name: 'POST /v1/x402/verify (API key, every check)', value: best.facilitator, unit: 'req/s', baseline: { name: 'the middleware\'s local check behind a bare route', value: best.local }, goal: 0.5 });

    const ms: number[] = [];
    for (let i = 0; i < SETTLES; i += 1) {
      const settleBody = JSON.stringify({ paymentPayload: await freshPayload(), paymentRequirements: accepted });
      const t0 = performance.now();
      const res = await fetch(`${api.url}/v1/x402/settle`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: settleBody });
      const answer = (await res.json()) as { success?: boolean };
      ms.push(performance.now() - t0);
      if (!answer.success) throw new Error(`bench settlement failed: ${JSON.stringify(answer)}`);
    }
    ms.sort((a, b) => a - b);
    process.stdout.write(`  settle on the localnet, ${SETTLES} sequential: p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms\n`);
    await api.close();
  } finally {
    await ln.close();
    await env.close();
  }
}
