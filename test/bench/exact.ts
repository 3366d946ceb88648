/**
 * The x402 `exact` scheme's cost, payments built by @x402/svm's own exact client on the
 * localnet answering as devnet:
 * - verify: POST /v1/x402/verify over HTTP (a gateway's API key, every check) at a fixed
 *   concurrency, requests/s as a ratio to the local check — the node's exact facilitator's
 *   verify called in-process, what the middleware runs — over the same payloads at the same
 *   concurrency (goal ≥ 0.5);
 * - settle: p50/p99 of POST /v1/x402/settle over distinct payments, sequential, against the
 *   localnet's own send + confirm of a plain SOL transfer (the same sender, the same
 *   commitment), each transfer sent just before its settlement.
 */
import autocannon from 'autocannon';
import bs58 from 'bs58';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { createTestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet } from '../support/devnet.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { confirm, send, type SenderIo } from '../../infra/solana/sender.js';
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import { createApiKey } from '../../commands/api-keys/store.js';
import { createExactFacilitator, type ExactFacilitator } from '../../commands/x402/exact/facilitator.js';
import type { AppNode } from '../../src/app/node.js';
import { percentile, report } from './harness.js';

const SECONDS = Number(process.env['BENCH_EXACT_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_EXACT_CONNECTIONS'] ?? 16);
const ROUNDS = Number(process.env['BENCH_EXACT_ROUNDS'] ?? 3);
const PAYLOADS = Number(process.env['BENCH_EXACT_PAYLOADS'] ?? 64);
const SETTLES = Number(process.env['BENCH_EXACT_SETTLES'] ?? 50);

async function pay(dn: DevnetLocalnet, payer: DevnetWallet, r: PaymentRequirements): Promise<PaymentPayload> {
  const { payload } = await new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl }).createPaymentPayload(2, r);
  return { x402Version: 2, resource: { url: 'https://merchant.example/report', description: 'a report', mimeType: 'application/json' }, accepted: r, payload };
}

/** The node's exact facilitator as the middleware builds it (src/app/x402-exact.ts), without the realtime rooms. */
function localFacilitator(node: AppNode): ExactFacilitator {
  const { solana, x402, redis, keys } = node.config;
  return createExactFacilitator({
    db: node.db, redis: node.redis, keyPrefix: redis.prefix, rpc: node.rpc, commitment: settlementCommitment(solana.commitment),
    network: solana.network, encryptionKey: keys.encryptionKey, clock: node.clock,
    settings: {
      maxPriorityFeeMicroLamports: x402.exact.maxPriorityFeeMicroLamports, maxComputeUnits: x402.exact.maxComputeUnits,
      confirmTimeoutMs: x402.confirmTimeoutMs, idempotencyTtlSeconds: x402.idempotencyTtlSeconds, keyCacheMs: 5000,
    },
  });
}

/** `concurrency` loops calling verify over the payloads in turn for `seconds`: calls/s. */
async function localRate(f: ExactFacilitator, payloads: readonly PaymentPayload[], r: PaymentRequirements): Promise<number> {
  let done = 0;
  let next = 0;
  const end = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < end) {
      const v = await f.verify(payloads[next++ % payloads.length]!, r);
      if (!v.isValid) throw new Error(`bench payment refused by the local check: ${v.invalidReason}`);
      done += 1;
    }
  }));
  return done / ((performance.now() - t0) / 1000);
}

/** autocannon at CONNECTIONS, each connection cycling through the bodies: requests/s. */
async function httpRate(url: string, key: string, bodies: readonly string[]): Promise<number> {
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  const r = await autocannon({
    url, connections: CONNECTIONS, duration: SECONDS, workers: 1,
    requests: bodies.map((body) => ({ method: 'POST' as const, path: '/v1/x402/verify', headers, body })),
  });
  if (r.non2xx > 0 || r.errors > 0) process.stdout.write(`  warning: ${r.non2xx} non-2xx answers and ${r.errors} errors\n`);
  return r.requests.average;
}

/** A plain SOL transfer, signed now, sent and confirmed as the facilitator's sender does: ms. */
async function plainTransfer(io: SenderIo, from: Keypair, lamports: number): Promise<number> {
  const { value } = await io.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{ commitment: io.commitment }]);
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: value.blockhash })
    .add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports }));
  tx.sign(from);
  const wire = tx.serialize().toString('base64');
  const t0 = performance.now();
  const sent = await send(io, wire);
  if (sent.kind !== 'sent') throw new Error(`bench transfer refused: ${JSON.stringify(sent)}`);
  const fate = await confirm(io, bs58Signature(tx), { timeoutMs: 10_000, history: true });
  if (fate.kind !== 'landed') throw new Error(`bench transfer not confirmed: ${fate.kind}`);
  return performance.now() - t0;
}

const bs58Signature = (tx: Transaction): string => {
  const sig = tx.signatures[0]?.signature;
  if (!sig) throw new Error('unsigned bench transfer');
  return bs58.encode(sig);
};

export async function benchExact(): Promise<void> {
  process.stdout.write('x402 exact\n');
  const seed = 'bench-exact';
  const env = await createTestEnv('bench_exact');
  const dn = await startDevnetLocalnet(seed);
  try {
    const api = await startTestApi(env, {
      SOLANA_RPC_URL: dn.rpcUrl, SOLANA_CLUSTER: 'devnet', SIGNING_KEY_ENCRYPTION_KEY: 'ef'.repeat(32), LOG_LEVEL: 'silent',
      X402_DEMO_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1000000000',
    });
    try {
      const gw = dn.ln.fixtures.gateways[0]!;
      const { key } = await createApiKey(env.db, gw.address, 'bench', new Date(), null);
      const local = localFacilitator(api.node);
      const kind = await local.supportedKind(DEVNET_NETWORK);
      const feePayer = String(kind?.kind.extra?.['feePayer']);
      fundWallet(dn.ln.chain, new PublicKey(feePayer), 0n);
      const merchant = dn.fund('merchant');
      const r: PaymentRequirements = {
        scheme: 'exact', network: DEVNET_NETWORK, amount: '1000000', asset: DEVNET_USDC, payTo: merchant.address, maxTimeoutSeconds: 60, extra: { feePayer },
      };

      const built = performance.now();
      const payloads = await Promise.all(Array.from({ length: PAYLOADS }, (_, i) => pay(dn, dn.fund(`verify-${i}`), r)));
      process.stdout.write(`  ${PAYLOADS} payments built by @x402/svm's exact client in ${((performance.now() - built) / 1000).toFixed(1)} s\n`);
      const bodies = payloads.map((p) => JSON.stringify({ x402Version: 2, paymentPayload: p, paymentRequirements: r }));

      const best = { local: 0, http: 0 };
      for (let round = 0; round < ROUNDS; round += 1) {
        // alternated, so that neither side always runs on the warmer process
        const first = round % 2 === 0;
        const h0 = first ? 0 : await httpRate(api.url, key, bodies);
        const l = await localRate(local, payloads, r);
        const h = first ? await httpRate(api.url, key, bodies) : h0;
        process.stdout.write(`  round ${round + 1}: local ${l.toFixed(0)} verifies/s, HTTP ${h.toFixed(0)} req/s\n`);
        best.local = Math.max(best.local, l);
        best.http = Math.max(best.http, h);
      }
      // autocannon counts answers, not verdicts: every payload must still be valid over HTTP
      for (const body of bodies) {
        const res = await fetch(`${api.url}/v1/x402/verify`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
        const v = (await res.json()) as { isValid?: boolean; invalidReason?: string };
        if (res.status !== 200 || v.isValid !== true) throw new Error(`bench payment refused over HTTP: ${res.status} ${JSON.stringify(v)}`);
      }
      report({
        name: `POST /v1/x402/verify, exact (API key, every check), ${CONNECTIONS} conns`, value: best.http, unit: 'req/s',
        baseline: { name: 'the exact facilitator\'s verify in-process', value: best.local }, goal: 0.5,
      });

      // settle: each payment distinct (its own payer), each beside a plain transfer timed the same way
      const io: SenderIo = { rpc: api.node.rpc, commitment: settlementCommitment(api.node.config.solana.commitment) };
      const sender = dn.fund('plain-sender').keypair;
      const settles = await Promise.all(Array.from({ length: SETTLES }, (_, i) => pay(dn, dn.fund(`settle-${i}`), r)));
      const settleMs: number[] = [];
      const plainMs: number[] = [];
      for (let i = 0; i < SETTLES; i += 1) {
        plainMs.push(await plainTransfer(io, sender, 1000 + i));
        const body = JSON.stringify({ x402Version: 2, paymentPayload: settles[i], paymentRequirements: r });
        const t0 = performance.now();
        const res = await fetch(`${api.url}/v1/x402/settle`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
        const answer = (await res.json()) as { success?: boolean };
        settleMs.push(performance.now() - t0);
        if (res.status !== 200 || !answer.success) throw new Error(`bench settlement failed: ${res.status} ${JSON.stringify(answer)}`);
      }
      settleMs.sort((a, b) => a - b);
      plainMs.sort((a, b) => a - b);
      const line = (p: number) => {
        const s = percentile(settleMs, p);
        const b = percentile(plainMs, p);
        return `p${p} ${s.toFixed(1)} ms vs ${b.toFixed(1)} ms (ratio ${(b / s).toFixed(2)})`;
      };
      process.stdout.write(`  POST /v1/x402/settle, exact, ${SETTLES} sequential vs a plain transfer's send + confirm: ${line(50)}, ${line(99)}\n`);
    } finally {
      await api.close();
    }
  } finally {
    await dn.close();
    await env.close();
  }
}
