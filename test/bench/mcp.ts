/**
 * The MCP tool-call round trip: p50/p99 of `subscription_status` called through
 * @modelcontextprotocol/sdk's Client over Streamable HTTP at /mcp (a JSON-RPC POST, a
 * server object per request, zod validation of the input), as a ratio to a plain
 * GET /v1/subscriptions of the same read (the same query function, the same filters),
 * in turn (a GET, a tool call, ...), on one API node in this process. The read cache is off for both, so each
 * answer reads Postgres; goal: the tool call costs at most twice the GET (ratio ≥ 0.5).
 */
import { Keypair } from '@solana/web3.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { registerPolicyRoutes } from '../../queries/policies/routes.js';
import { registerMcpRoutes } from '../../src/app/mcp/http.js';
import { percentile, report } from './harness.js';

const CALLS = Number(process.env['BENCH_MCP_CALLS'] ?? 500);
const WARMUP = 50;
const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

/** Both calls in turn, so that a noisy moment of the machine falls on both alike. */
async function latencies(n: number, a: () => Promise<void>, b: () => Promise<void>): Promise<[number[], number[]]> {
  for (let i = 0; i < WARMUP; i += 1) { await a(); await b(); }
  const ms: [number[], number[]] = [[], []];
  for (let i = 0; i < n; i += 1) {
    for (const [k, f] of [[0, a], [1, b]] as const) {
      const t0 = performance.now();
      await f();
      ms[k].push(performance.now() - t0);
    }
  }
  return [ms[0].sort((x, y) => x - y), ms[1].sort((x, y) => x - y)];
}

export async function benchMcp(): Promise<void> {
  process.stdout.write('MCP tool call\n');
  const env = await createTestEnv('bench_mcp');
  const api = await startTestApi(env, {
    SOLANA_CLUSTER: 'localnet', LOG_LEVEL: 'silent', MCP_ENABLED: 'true', X402_DEMO_ENABLED: 'false', READ_CACHE_TTL_MS: '0', RATE_LIMIT_PER_MINUTE: '1000000000',
  }, { modules: [registerPolicyRoutes, registerMcpRoutes] });
  const client = new Client({ name: 'bench-agent', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`)));
    const wallet = Keypair.generate().publicKey.toBase58();
    const url = `${api.url}/v1/subscriptions?walletPublicKey=${wallet}&tokenMint=${USDC_DEV}`;
    const [get, tool] = await latencies(CALLS, async () => {
      const res = await fetch(url);
      if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
      await res.arrayBuffer();
    }, async () => {
      const r = await client.callTool({ name: 'subscription_status', arguments: { walletPublicKey: wallet, tokenMint: USDC_DEV } });
      if (r.isError) throw new Error(`the tool answered an error: ${JSON.stringify(r.content)}`);
    });
    for (const p of [50, 99] as const) {
      report({
        name: `subscription_status over MCP (Streamable HTTP), ${CALLS} sequential, p${p}`, value: percentile(tool, p), unit: 'ms',
        baseline: { name: `GET /v1/subscriptions of the same read p${p}`, value: percentile(get, p) }, higherIsBetter: false, goal: 0.5,
      });
    }
  } finally {
    await client.close();
    await api.close();
    await env.close();
  }
}
