/** `make bench`: every benchmark, each figure a ratio to a baseline measured in this run. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '../../infra/cluster/node-flags.js';

const BENCHES: Record<string, () => Promise<void>> = {
  spine: async () => (await import('./spine.js')).benchSpine(),
  policies: async () => (await import('./policies.js')).benchPolicies(),
  realtime: async () => (await import('./realtime.js')).benchRealtime(),
  ingest: async () => (await import('./ingest.js')).benchIngest(),
  webhooks: async () => (await import('./webhooks.js')).benchWebhooks(),
  'webhooks-record': async () => (await import('./webhook-record-batch.js')).benchWebhookRecordBatch(),
  reads: async () => (await import('./reads.js')).benchReads(),
  'reads-cpu': async () => (await import('./reads.js')).benchReadsCpu(),
  'reads-keys': async () => (await import('./reads-keys.js')).benchReadKeys(),
  x402: async () => (await import('./x402.js')).benchX402(),
  merchant: async () => (await import('./merchant.js')).benchMerchant(),
  facilitator: async () => (await import('./facilitator.js')).benchFacilitator(),
  exact: async () => (await import('./exact.js')).benchExact(),
  settlement: async () => (await import('./settlement.js')).benchSettlement(),
  archive: async () => (await import('./archive.js')).benchArchive(),
  mcp: async () => (await import('./mcp.js')).benchMcp(),
  checkout: async () => (await import('./checkout.js')).benchCheckout(),
  'redis-cluster': async () => (await import('./redis-cluster.js')).benchRedisCluster(),
};

const only = process.argv.slice(2);
const chosen = Object.keys(BENCHES).filter((name) => only.length === 0 || only.includes(name));
// a bench runs the service's code in its own process, so with the options node has in the service's
const withServiceFlags = SERVICE_NODE_FLAGS.every((f) => process.execArgv.includes(f));
if (chosen.length === 1 && withServiceFlags) {
  await BENCHES[chosen[0]!]!();
  process.exit(0);
}
// Several benches: each in a process of its own, as when run alone. In one process the
// later benches inherited the earlier ones' heap and compiled code: the webhooks bench,
// whose receivers run in this process, saw their GC pauses and POST times grow (first
// attempt p99 6 s at 1,000 events/s after spine, policies, realtime and ingest, against
// 1 s in a process of its own, the same session). A bench that fails is reported and the
// others still run. Every bench is imported lazily, so this parent loads none of them.
const failed: string[] = [];
for (const name of chosen) {
  const code = await new Promise<number | null>((resolve) => {
    const flags = SERVICE_NODE_FLAGS.filter((f) => !process.execArgv.includes(f));
    const child = spawn(process.execPath, [...process.execArgv, ...flags, fileURLToPath(import.meta.url), name], { stdio: 'inherit' });
    child.on('exit', resolve);
  });
  if (code !== 0) {
    failed.push(name);
    process.stdout.write(`bench ${name} failed (exit ${code})\n`);
  }
}
if (failed.length > 0) process.stdout.write(`failed: ${failed.join(', ')}\n`);
process.exit(failed.length > 0 ? 1 : 0);
