/**
 * The x402 bearer path's cost: requests/s of one route behind paymentRequired with a
 * bearer JWT, as a ratio to the same route unprotected, both through the full HTTP app of
 * one API node (goal ≥ 0.7). The JWT is earned the real way (a subscription paid on a
 * localnet). A second figure: the pay-as-you-go path, each request metered (a Redis script)
 * and its row durable in Postgres before its answer, against the same baseline. A third:
 * x402://prepaid, each request drawn from a credit (the same). At 32 connections one payer's
 * counter is busy: its rows are recorded ahead in blocks (commands/x402/meter-pool.ts).
 */
import { createTestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { startLocalnet } from '../../infra/localnet/index.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { localnetGateway } from '../../commands/x402/demo.js';
import { paymentRequired } from '../../commands/x402/middleware.js';
import type { PaymentRequirementInput } from '../../commands/x402/requirements.js';
import { payAndFetch } from '../../commands/x402/client/pay.js';
import type { RouteModule } from '../../src/app/node.js';
import { Keypair } from '@solana/web3.js';
import { httpLoad, report } from './harness.js';
import { profileX402 } from './x402-profile.js';

const SECONDS = Number(process.env['BENCH_X402_SECONDS'] ?? 4);
const CONNECTIONS = Number(process.env['BENCH_X402_CONNECTIONS'] ?? 32);
const ROUNDS = Number(process.env['BENCH_X402_ROUNDS'] ?? 2);

export async function benchX402(): Promise<void> {
  process.stdout.write('x402\n');
  const seed = 'bench-x402';
  const env = await createTestEnv('bench_x402');
  const ln = await startLocalnet({ port: 0, seed, rate: 0 });
  try {
    const gw = localnetGateway(seed, ln.fixtures.programId);
    const common = { network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' };
    const deferred: PaymentRequirementInput = { ...common, scheme: 'deferred', amount: 1_000_000 };
    const payg: PaymentRequirementInput = { ...common, scheme: 'x402://payg', amount: 1, maxChunkAmount: 1, maxAmountPerPeriod: 1_000_000_000_000,
      // the bench measures admission, not the settler: no exposure bound short of the cap
      maxUnsettledAmount: 1_000_000_000_000 };
    const prepaid: PaymentRequirementInput = { ...common, scheme: 'x402://prepaid', amount: 1_000_000_000, pricePerRequest: 1 };
    // the same route three times on one app: the middleware is the only difference
    const routes: RouteModule = (api, node) => {
      const deps = node.x402;
      const route = {
        method: 'get' as const, summary: 'bench', tags: ['bench'], responses: { 200: { description: 'ok' } },
        handler: async () => ({ body: { content: 'bench' } }),
      };
      api.route({ ...route, path: '/bench/open' });
      api.route({ ...route, path: '/bench/deferred', before: [paymentRequired([deferred], deps)] });
      api.route({ ...route, path: '/bench/payg', before: [paymentRequired([payg], deps)] });
      api.route({ ...route, path: '/bench/prepaid', before: [paymentRequired([prepaid], deps)] });
    };
    const api = await startTestApi(env, {
      SOLANA_RPC_URL: ln.rpcUrl, SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: seed, LOG_LEVEL: 'silent', X402_DEMO_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1000000000',
    }, { modules: [registerSigningRoutes, routes] });
    const jwtFor = async (path: string, scheme: 'deferred' | 'x402://payg' | 'x402://prepaid') => {
      const wallet = Keypair.generate();
      fundWallet(ln.chain, wallet.publicKey);
      const r = await payAndFetch(`${api.url}${path}`, { wallet, rpcUrl: ln.rpcUrl, scheme });
      if (!r.paid || r.response.status !== 200) throw new Error(`bench payment failed: HTTP ${r.response.status}`);
      return r.paid.jwt;
    };
    const deferredJwt = await jwtFor('/bench/deferred', 'deferred');
    const paygJwt = await jwtFor('/bench/payg', 'x402://payg');
    const prepaidJwt = await jwtFor('/bench/prepaid', 'x402://prepaid');

    const targets = {
      open: { url: `${api.url}/bench/open`, headers: {} },
      deferred: { url: `${api.url}/bench/deferred`, headers: { authorization: `Bearer ${deferredJwt}` } },
      payg: { url: `${api.url}/bench/payg`, headers: { authorization: `Bearer ${paygJwt}` } },
      prepaid: { url: `${api.url}/bench/prepaid`, headers: { authorization: `Bearer ${prepaidJwt}` } },
    };
    if (process.env['BENCH_X402_PROFILE']) {
      await profileX402(targets, env.redis, { db: env.db, database: env.name });
      await api.close();
      return;
    }
    // rounds alternate the three, and each keeps its best: a noisy neighbour on a shared machine hurts one run, not a figure
    const best: Record<keyof typeof targets, number> = { open: 0, deferred: 0, payg: 0, prepaid: 0 };
    for (const t of Object.values(targets)) await httpLoad(t.url, CONNECTIONS, 1, t.headers); // warm-up
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, t] of Object.entries(targets) as [keyof typeof targets, (typeof targets)['open']][]) {
        const r = await httpLoad(t.url, CONNECTIONS, SECONDS, t.headers);
        if (r.non2xx > 0 || r.errors > 0) process.stdout.write(`  warning: ${name} run had ${r.non2xx} non-2xx answers and ${r.errors} errors\n`);
        best[name] = Math.max(best[name], r.rps);
      }
    }
    const baseline = { name: 'same route unprotected', value: best.open };
    report({ name: 'bearer JWT through paymentRequired (deferred)', value: best.deferred, unit: 'req/s', baseline, goal: 0.7 });
    report({ name: 'bearer JWT, pay-as-you-go metered, each row durable before its answer', value: best.payg, unit: 'req/s', baseline, goal: 0.7 });
    report({ name: 'bearer JWT, prepaid credit drawn, each row durable before its answer', value: best.prepaid, unit: 'req/s', baseline, goal: 0.7 });
    await api.close();
  } finally {
    await ln.close();
    await env.close();
  }
}
