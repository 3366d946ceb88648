/**
 * One process of the webhooks bench's baseline (./webhooks.ts): the delivery bodies of the
 * measured run, POSTed straight to its receivers by the workers' HTTP client at a worker's
 * concurrency, with no outbox. Started once per worker process, each taking every
 * `processes`-th delivery. Prints `ready` once its bodies are built, starts on a line on
 * stdin (so that node's start-up is not timed), and ends with one JSON line of its figures.
 *
 * Input (env BENCH_DIRECT, JSON): urls, gateway, seed, events, process, processes, concurrency.
 */
import { createInterface } from 'node:readline';
import { createJsonPoster } from '../../infra/http/post-json.js';
import { deliveryBody } from '../../commands/webhooks/delivery/deliver.js';
import { apiEventOf } from '../../projections/webhooks/projection.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

export interface DirectInput { urls: string[]; gateway: string; seed: number; events: number; process: number; processes: number; concurrency: number }
export interface DirectResult { startedAt: number; endedAt: number; answered: number; failed: number }

/** The events of a bench run, as ./webhooks.ts appends them. */
export const benchEvents = (n: number, seed: number, gateway: string): TributaryEvent[] =>
  syntheticEvents(n, seed).map((e) => ({ ...e, data: { ...e.data, gateway } }) as TributaryEvent);

async function main(): Promise<void> {
  const input = JSON.parse(process.env['BENCH_DIRECT'] ?? '') as DirectInput;
  const queuedAt = new Date();
  const requests: { url: string; id: string; body: string }[] = [];
  benchEvents(input.events, input.seed, input.gateway).forEach((e, i) => {
    const body = deliveryBody({ event_id: e.id, event_name: e.name, payload: apiEventOf(e), created_at: queuedAt });
    input.urls.forEach((url, r) => {
      if ((i * input.urls.length + r) % input.processes === input.process) requests.push({ url, id: `direct-${r}-${e.id}`, body });
    });
  });
  const poster = createJsonPoster({ allowPrivateTargets: true, maxSockets: input.concurrency, userAgent: 'bench-direct' });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  let next = 0;
  let failed = 0;
  const startedAt = Date.now();
  await Promise.all(Array.from({ length: input.concurrency }, async () => {
    while (next < requests.length) {
      const q = requests[next++]!;
      await poster.post(q.url, q.body, { 'webhook-id': q.id }, { timeoutMs: 10_000 }).catch(() => { failed += 1; });
    }
  }));
  const result: DirectResult = { startedAt, endedAt: Date.now(), answered: requests.length - failed, failed };
  poster.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

if (process.env['BENCH_DIRECT']) await main();
