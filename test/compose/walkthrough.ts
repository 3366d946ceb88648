/**
 * The README's walkthrough against the compose stack, through nginx: payments visible over
 * HTTP, a 402 paid with `tributary pay` (the image's CLI, run in a container of the stack),
 * a webhook received by a local receiver, payments over Socket.IO (as `tributary watch`).
 */
import { io } from 'socket.io-client';
import type { LocalnetFixtures } from '../../infra/localnet/fixtures.js';
import { registerWebhook, startLedgerReceiver, type LedgerReceiver } from '../soak/webhooks.js';
import type { Stack } from './stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Step { name: string; ok: boolean; detail: string }

export interface Walkthrough {
  steps: Step[];
  fixtures: LocalnetFixtures;
  receiver: LedgerReceiver;
}

async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json() as T };
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const t0 = Date.now();
  let last: unknown;
  while (Date.now() - t0 < timeoutMs) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(1000);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms${last === undefined ? '' : ` (${last instanceof Error ? last.message : JSON.stringify(last)})`}`);
}

export async function readFixtures(stack: Stack): Promise<LocalnetFixtures> {
  const id = await stack.container('localnet');
  const { execFileSync } = await import('node:child_process');
  return JSON.parse(execFileSync('docker', ['exec', id, 'cat', '/app/.localnet/fixtures.json'], { encoding: 'utf8' })) as LocalnetFixtures;
}

async function paymentsVisible(base: string): Promise<Step> {
  const count = await until('PaymentRecord events over HTTP', 180_000, async () => {
    const r = await getJson<{ count: number }>(`${base}/v1/events/count?eventName=PaymentRecord`);
    return r.status === 200 && r.body.count > 0 ? r.body.count : undefined;
  });
  const list = await getJson<unknown>(`${base}/v1/events?eventName=PaymentRecord&limit=3`);
  const n = Array.isArray(list.body) ? list.body.length : 0;
  return { name: 'payments visible', ok: list.status === 200 && n > 0, detail: `count ${count}; the list of 3 answered ${list.status} with ${n}` };
}

async function paid402(stack: Stack, base: string, fixtures: LocalnetFixtures): Promise<Step> {
  const res = await fetch(`${base}/v1/x402/demo`);
  const header = res.headers.get('payment-required');
  await res.arrayBuffer();
  const wallet = fixtures.wallets.find((w) => w.role === 'spare');
  if (wallet === undefined) return { name: '402 paid', ok: false, detail: 'no spare wallet in the fixtures' };
  const paid = await stack.exec('localnet', ['pay', `${base}/v1/x402/demo`, '--wallet', wallet.secretKey]);
  const ok = res.status === 402 && header !== null && paid.code === 0;
  const said = `${paid.stdout}${paid.stderr}`.split('\n').filter((l) => /^(paid|HTTP|used)/.test(l));
  const tail = said.join(' | ').slice(0, 240);
  return { name: '402 paid with tributary pay', ok, detail: `unpaid ${res.status}, Payment-Required ${header === null ? 'missing' : 'present'}; pay exit ${paid.code}: ${tail}` };
}

/** as `tributary watch trk-1 --since …` does, through nginx's Socket.IO route: history, then live */
async function socketPayment(base: string): Promise<Step> {
  const socket = io(base, { path: '/ws/v1', transports: ['websocket'] });
  let caughtUp = false;
  const seen = { history: 0, live: 0 };
  socket.on('connect', () => socket.emit('subscribe', { trackingId: 'trk-1', since: '2020-01-01T00:00:00Z' }));
  socket.on('caught_up', () => { caughtUp = true; });
  socket.on('payment', () => { seen[caughtUp ? 'live' : 'history'] += 1; });
  try {
    await until('a live payment of trk-1', 120_000, () => Promise.resolve(seen.live > 0 ? true : undefined)).catch(() => false);
  } finally {
    socket.close();
  }
  return { name: 'Socket.IO payments (as tributary watch trk-1)', ok: seen.history + seen.live > 0, detail: `${seen.history} caught up, ${seen.live} live` };
}

export async function runWalkthrough(stack: Stack, base: string, adminKey: string): Promise<Walkthrough> {
  const steps: Step[] = [];
  const health = await fetch(`${base}/v1/health`);
  steps.push({ name: 'health through nginx', ok: health.ok, detail: `${health.status}` });
  await health.arrayBuffer();
  const fixtures = await readFixtures(stack);
  // the receiver first, so it gets the gateway's events from here on
  const receiver = await startLedgerReceiver(fixtures.gateways[0]!.authority);
  await registerWebhook(base, adminKey, receiver);
  steps.push(await paymentsVisible(base));
  steps.push(await paid402(stack, base, fixtures));
  const first = await until('a webhook', 180_000, async () => (receiver.received.size > 0 ? receiver.received.size : undefined)).catch(() => 0);
  steps.push({ name: 'webhook received', ok: first > 0, detail: `webhook ${receiver.webhookId ?? '?'} for ${receiver.gateway.slice(0, 8)}…: ${first} event(s) received so far` });
  steps.push(await socketPayment(base));
  return { steps, fixtures, receiver };
}
