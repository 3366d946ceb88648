/**
 * One process of the webhooks bench's baseline (./webhooks.ts): the delivery bodies of a
 * measured run, POSTed straight to its receivers by the workers' HTTP client at a worker's
 * concurrency, with no outbox. Started once per worker process, each taking every
 * `processes`-th delivery. Prints `ready` once its bodies are built, starts on a line on
 * stdin (so that node's start-up is not timed), and ends with one JSON line of its figures.
 *
 * Paced (`rate` > 0): event i is due when the bench's feed would append it (ticks of 50 ms,
 * `rate` events a second), and no POST starts before its event is due; a POST's latency is
 * from its event's due time to its answer. Unpaced (`rate` 0): every POST is due at once.
 *
 * Input (env BENCH_DIRECT, JSON): urls, gateway, seed, events, process, processes,
 * concurrency, rate, tag (in the webhook-id, so runs do not share ids at the receivers).
 */
import { createInterface } from 'node:readline';
import { createJsonPoster } from '../../infra/http/post-json.js';
import { deliveryBody } from '../../commands/webhooks/delivery/deliver.js';
import { apiEventOf } from '../../projections/webhooks/projection.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

export interface DirectInput {
  urls: string[]; gateway: string; seed: number; events: number; process: number; processes: number; concurrency: number;
  /** events per second, as the bench feeds them; 0: unpaced */
  rate: number;
  tag: string;
  /** events POSTed (paced alike, other ids) before `ready`, so the timed POSTs start warm as the workers do */
  warm: number;
}
/** `dues[i]`: when the POST of `latencies[i]` was due, ms since the epoch */
export interface DirectResult { startedAt: number; endedAt: number; answered: number; failed: number; latencies: number[]; dues: number[] }

/** The events of a bench run, as ./webhooks.ts appends them. */
export const benchEvents = (n: number, seed: number, gateway: string): TributaryEvent[] =>
  syntheticEvents(n, seed).map((e) => ({ ...e, data: { ...e.data, gateway } }) as TributaryEvent);

/** The bench's feed: `perTick` events every FEED_TICK_MS. */
export const FEED_TICK_MS = 50;
export const perTick = (rate: number): number => Math.max(1, Math.round((rate * FEED_TICK_MS) / 1000));
/** When event `i` is appended, in ms after the feed's start (0 for an unpaced feed). */
export const dueOffsetMs = (i: number, rate: number): number => (rate > 0 ? Math.floor(i / perTick(rate)) * FEED_TICK_MS : 0);

async function main(): Promise<void> {
  const input = JSON.parse(process.env['BENCH_DIRECT'] ?? '') as DirectInput;
  const queuedAt = new Date();
  type Request = { url: string; id: string; body: string; dueMs: number };
  const requestsOf = (events: number, seed: number, tag: string): Request[] => {
    const requests: Request[] = [];
    benchEvents(events, seed, input.gateway).forEach((e, i) => {
      const body = deliveryBody({ event_id: e.id, event_name: e.name, payload: apiEventOf(e), created_at: queuedAt });
      input.urls.forEach((url, r) => {
        if ((i * input.urls.length + r) % input.processes === input.process) {
          requests.push({ url, id: `direct-${tag}-${r}-${e.id}`, body, dueMs: dueOffsetMs(i, input.rate) });
        }
      });
    });
    return requests;
  };
  const requests = requestsOf(input.events, input.seed, input.tag);
  const poster = createJsonPoster({ allowPrivateTargets: true, maxSockets: input.concurrency, userAgent: 'bench-direct' });
  let failed = 0;
  const latencies: number[] = [];
  const dues: number[] = [];
  const postAll = async (list: readonly Request[], startedAt: number, record: boolean): Promise<void> => {
    let next = 0;
    await Promise.all(Array.from({ length: input.concurrency }, async () => {
      while (next < list.length) {
        const q = list[next++]!;
        const due = startedAt + q.dueMs;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await poster.post(q.url, q.body, { 'webhook-id': q.id }, { timeoutMs: 10_000 })
          .then(() => { if (record) { latencies.push(Date.now() - due); dues.push(due); } }, () => { if (record) failed += 1; });
      }
    }));
  };
  if (input.warm > 0) await postAll(requestsOf(input.warm, input.seed + 1000, `${input.tag}-warm`), Date.now(), false);
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  const startedAt = Date.now();
  await postAll(requests, startedAt, true);
  const result: DirectResult = { startedAt, endedAt: Date.now(), answered: requests.length - failed, failed, latencies, dues };
  poster.close();
  // exit only once the (long) line is written: a pipe takes it in several writes
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

if (process.env['BENCH_DIRECT']) await main();
