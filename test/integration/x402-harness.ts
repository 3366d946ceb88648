/**
 * What the x402 tests share: a localnet started in the test (no workload, so every
 * transaction on it is one the test caused), an API node in-process serving the JWKS and
 * the demo resource against it, fresh funded payers, and the chain's transaction count.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { createRpcClient, type RpcClient } from '../../infra/solana/rpc-client.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerX402Routes } from '../../commands/x402/routes.js';
import { registerFacilitatorRoutes } from '../../commands/x402/facilitator/routes.js';
import { registerApiKeyRoutes } from '../../commands/api-keys/routes.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import type { Clock } from '../../src/kernel/domain/clock.js';

export const DEMO_PATH = '/v1/x402/demo';

export interface X402Harness {
  env: TestEnv;
  ln: Localnet;
  api: TestApi;
  rpc: RpcClient;
  seed: string;
  overrides: Record<string, string>;
  /** a funded wallet that owns nothing yet */
  payer(): Keypair;
  /** the demo's requirements, as an unpaid request lists them */
  accepts(): Promise<AcceptedRequirement[]>;
  /** transactions the chain has landed (failed ones included) */
  txCount(): number;
  /** the JSON-RPC methods the API nodes called, in order (they reach the chain through a recording proxy) */
  rpcCalls(): string[];
  /** another API node on the same database, Redis prefix and chain */
  secondNode(): Promise<TestApi>;
  close(): Promise<void>;
}

/** `faults`, `faultsSeed`: the hostile localnet (LOCALNET_FAULTS' syntax and its seed); default none */
export async function startX402(
  tag: string, extra: Record<string, string> = {}, opts: { clock?: Clock; faults?: string; faultsSeed?: string } = {},
): Promise<X402Harness> {
  const env = await createTestEnv(tag);
  const seed = `x402-${tag}`;
  const ln = await startLocalnet({ port: 0, seed, rate: 0, ...(opts.faults ? { faults: opts.faults, faultsSeed: opts.faultsSeed ?? seed } : {}) });
  const proxy = await recordingProxy(ln.rpcUrl);
  const overrides = {
    SOLANA_RPC_URL: proxy.url, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: seed, ...extra,
  };
  const modules = [registerSigningRoutes, registerX402Routes, registerFacilitatorRoutes, registerApiKeyRoutes];
  const api = await startTestApi(env, overrides, { modules, ...(opts.clock ? { clock: opts.clock } : {}) });
  const nodes: TestApi[] = [api];
  return {
    env, ln, api, seed, overrides,
    rpc: createRpcClient({ url: ln.rpcUrl, timeoutMs: 5000 }),
    payer() {
      const k = Keypair.generate();
      fundWallet(ln.chain, k.publicKey);
      return k;
    },
    async accepts() {
      const res = await fetch(`${api.url}${DEMO_PATH}`);
      return ((await res.json()) as { accepts: AcceptedRequirement[] }).accepts;
    },
    txCount: () => ln.chain.transactions().length,
    rpcCalls: () => [...proxy.calls],
    async secondNode() {
      const n = await startTestApi(env, overrides, { modules, ...(opts.clock ? { clock: opts.clock } : {}) });
      nodes.push(n);
      return n;
    },
    async close() {
      for (const n of nodes) await n.close();
      await new Promise((r) => { proxy.server.closeAllConnections(); proxy.server.close(r); });
      await ln.close();
      await env.close();
    },
  };
}

/** Forwards JSON-RPC POSTs to the localnet and records each method called. */
async function recordingProxy(target: string): Promise<{ url: string; calls: string[]; server: Server }> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      try {
        const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
        for (const m of Array.isArray(parsed) ? parsed : [parsed]) calls.push(m.method ?? '?');
      } catch { calls.push('?'); }
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (r) => { res.writeHead(r.status, { 'content-type': 'application/json' }); res.end(await r.text()); })
        .catch(() => { res.writeHead(502); res.end(); });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}
