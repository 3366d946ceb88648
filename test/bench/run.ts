/** `make bench`: every benchmark, each figure a ratio to a baseline measured in this run. */
import { benchSpine } from './spine.js';
import { benchPolicies } from './policies.js';
import { benchRealtime } from './realtime.js';
import { benchWebhooks } from './webhooks.js';

const BENCHES: Record<string, () => Promise<void>> = {
  spine: benchSpine,
  policies: benchPolicies,
  realtime: benchRealtime,
  ingest: async () => (await import('./ingest.js')).benchIngest(),
  webhooks: benchWebhooks,
  'webhooks-record': async () => (await import('./webhook-record-batch.js')).benchWebhookRecordBatch(),
  reads: async () => (await import('./reads.js')).benchReads(),
  'reads-cpu': async () => (await import('./reads.js')).benchReadsCpu(),
  'reads-keys': async () => (await import('./reads-keys.js')).benchReadKeys(),
  x402: async () => (await import('./x402.js')).benchX402(),
  merchant: async () => (await import('./merchant.js')).benchMerchant(),
  facilitator: async () => (await import('./facilitator.js')).benchFacilitator(),
  settlement: async () => (await import('./settlement.js')).benchSettlement(),
  archive: async () => (await import('./archive.js')).benchArchive(),
};

const only = process.argv.slice(2);
for (const [name, bench] of Object.entries(BENCHES)) {
  if (only.length > 0 && !only.includes(name)) continue;
  await bench();
}
process.exit(0);
