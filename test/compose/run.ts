/**
 * `make compose-test` (through compose-test.sh, which builds the images, sets the secrets
 * and tears the stack down): infra/deploy/compose.yaml up on this machine, every service
 * healthy, the README's walkthrough through nginx, then load while one API node and then
 * Redis restart, and the proof that nothing was lost: the archive equals the localnet's
 * ledger (none missing, none twice, none foreign) and every webhook was delivered.
 */
import { sql } from 'kysely';
import { createDb } from '../../infra/postgres/database.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { rpcCall } from '../support/localnet-process.js';
import { archiveCheck, webhookCheck, type Check } from '../soak/checks.js';
import { startLoad, type WindowFigures } from './load.js';
import { composeCommand, openStack } from './stack.js';
import { runWalkthrough } from './walkthrough.js';

const env = process.env;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const need = (name: string) => env[name] ?? (() => { throw new Error(`${name} is not set (compose-test.sh sets it)`); })();

const SERVICES = ['postgres', 'postgres-replica', 'redis', 'localnet', 'migrate', 'api-1', 'api-2', 'indexer', 'projector', 'webhooks', 'notifier', 'scheduler', 'nginx'];
const ROLES = SERVICES.filter((s) => !['postgres', 'postgres-replica', 'redis', 'migrate'].includes(s));
const HOLD_MS = Number(env['COMPOSE_TEST_HOLD_SECONDS'] ?? 20) * 1000;
const t0 = Date.now();
const log = (s: string) => process.stdout.write(`[compose-test ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);

async function ledgerOf(rpcUrl: string): Promise<TributaryEvent[]> {
  const out: TributaryEvent[] = [];
  for (;;) {
    const page = await rpcCall<{ total: number; events: TributaryEvent[] }>(rpcUrl, 'tributary_getLedger', [{ offset: out.length, limit: 10_000 }]);
    out.push(...page.events);
    if (page.events.length === 0 || out.length >= page.total) return out;
  }
}

async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await done())) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(1000);
  }
  return Date.now() - start;
}

function windowLine(w: WindowFigures): string {
  const errs = w.firstErrors.length ? ` (${w.firstErrors.join('; ')})` : '';
  return `${w.name.padEnd(14)} ${(w.ms / 1000).toFixed(1).padStart(6)} s  reads ${String(w.reads).padStart(4)}, errors ${String(w.readErrors).padStart(3)}  pays ${String(w.pays).padStart(4)}, errors ${String(w.payErrors).padStart(3)}  429s ${w.limited}${errs}`;
}

async function main(): Promise<number> {
  const stack = openStack(env['COMPOSE_PROJECT'] ?? 'tributary-test');
  const base = `http://127.0.0.1:${env['HTTP_PORT'] ?? '8080'}`;
  const rpcUrl = `http://127.0.0.1:${env['LOCALNET_PORT'] ?? '28899'}`;
  const db = createDb(`postgres://tributary:${need('POSTGRES_PASSWORD')}@127.0.0.1:${env['PG_PORT'] ?? '25432'}/tributary`, 2, 'compose-test');
  const checks: Check[] = [];
  try {
    log(`${composeCommand().join(' ')} up: ${SERVICES.length} services`);
    await stack.compose(['up', '-d']);
    const healthyMs = Date.now() - t0;
    const extraMs = await stack.waitHealthy(SERVICES, 600_000);
    log(`every service healthy ${((healthyMs + extraMs) / 1000).toFixed(1)} s after up`);

    const walk = await runWalkthrough(stack, base, need('ADMIN_API_KEY'));
    for (const s of walk.steps) log(`walkthrough: ${s.ok ? 'ok  ' : 'FAIL'} ${s.name}: ${s.detail}`);
    checks.push(...walk.steps);

    const wallets = walk.fixtures.wallets.filter((w) => w.role === 'spare').map((w) => w.secretKey);
    // under the API's 600 requests a minute per client address (all of them come from here)
    const load = startLoad(base, rpcUrl, wallets, { readers: 2, payers: 2, readEveryMs: 400, payEveryMs: 1500 });
    await sleep(HOLD_MS);
    load.window('api-1 restart');
    log('restarting api-1 under load');
    await stack.compose(['restart', 'api-1']);
    const apiBackMs = await stack.waitHealthy(['api-1'], 180_000);
    await sleep(HOLD_MS);
    load.window('redis restart');
    log('restarting redis under load');
    await stack.compose(['restart', 'redis']);
    const redisBackMs = await stack.waitHealthy(['redis', ...ROLES], 180_000);
    await sleep(HOLD_MS);
    load.window('after');
    await sleep(HOLD_MS);
    const windows = await load.stop();

    // the cut: the chain's workload and the scheduler stop, so the ledger stays as it is
    await rpcCall(rpcUrl, 'tributary_setWorkloadRate', [0]);
    await stack.compose(['stop', 'scheduler']);
    await sleep(3000);
    const ledger = await ledgerOf(rpcUrl);
    const archived = async () => Number((await sql<{ n: string }>`SELECT count(DISTINCT id)::text AS n FROM events`.execute(db)).rows[0]!.n);
    const drainMs = await until('the archive reaching the ledger', 300_000, async () => (await archived()) >= ledger.length).catch(() => -1);
    checks.push(await archiveCheck(db, ledger));
    const pending = async () => Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM webhook_deliveries WHERE status <> 'delivered'`.execute(db)).rows[0]!.n);
    await until('every webhook delivered', 300_000, async () => (await pending()) === 0).catch(() => -1);
    checks.push(await webhookCheck(db, [walk.receiver]));
    await walk.receiver.close();

    const payments = ledger.filter((e) => e.name === 'PaymentRecord').length;
    const counted = windows.reduce((a, w) => ({ pays: a.pays + w.pays, errors: a.errors + w.payErrors }), { pays: 0, errors: 0 });
    log('figures:');
    log(`  image tributary:latest ${env['IMAGE_MB'] ?? '?'} MB (bound ${env['IMAGE_MAX_MB'] ?? '500'} MB); healthy ${((healthyMs + extraMs) / 1000).toFixed(1)} s after up`);
    log(`  api-1 healthy again ${(apiBackMs / 1000).toFixed(1)} s after its restart; every role healthy ${(redisBackMs / 1000).toFixed(1)} s after Redis's`);
    log(`  ledger ${ledger.length} events, ${payments} PaymentRecord; tributary pay under load ${counted.pays} runs, ${counted.errors} failed; archive drained ${(drainMs / 1000).toFixed(1)} s after the cut`);
    for (const w of windows) log(`  ${windowLine(w)}`);
    for (const c of checks.slice(walk.steps.length)) log(`check: ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
    const failed = checks.filter((c) => !c.ok);
    log(failed.length === 0 ? `PASS: ${checks.length} checks` : `FAIL: ${failed.map((c) => c.name).join(', ')}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`FAIL: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    process.exit(1);
  },
);
