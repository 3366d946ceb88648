/**
 * Query routes read through DATABASE_READ_URL: an API node process whose primary and
 * streaming replica are real PostgreSQL servers set up exactly as `make cluster` sets up
 * its replica (infra/cluster/replica.ts: pg_basebackup -R, hot standby). The primary is
 * a private one (initdb into a temporary directory), so the test never touches the
 * machine's shared server. With the replica's WAL replay paused, an event committed on
 * the primary is not served by the API; once replay resumes, it is. The replica's
 * pg_stat_activity shows the node's read pool (application_name tributary-api-read).
 *
 * Skipped, saying why, only when a replica cannot be made on this machine (no PostgreSQL
 * server binaries, or no way to run them as a non-root user).
 */
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { freePort } from '../support/ports.js';
import { startCli, waitFor, type Proc } from '../support/process.js';
import { makeEvent } from '../support/anchor-events.js';
import { initPrimary, pgBinDir, serverUser, startPgServer, waitPgReady } from '../../infra/cluster/postgres.js';
import { setUpReplica, type Replica } from '../../infra/cluster/replica.js';
import type { Supervised } from '../../infra/cluster/child.js';
import { createDb, ensureDatabase, type Db } from '../../infra/postgres/database.js';
import { migrateToLatest } from '../../infra/migrations/index.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { uniqueName } from '../support/env.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

async function sqlOn(url: string, text: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return (await c.query(text)).rows; } finally { await c.end(); }
}

describe('scaling: query routes read through a streaming replica (DATABASE_READ_URL)', function () {
  this.timeout(180_000);
  let dir = '';
  let primary: Supervised | undefined;
  let replica: Replica | undefined;
  let db: Db | undefined;
  let api: Proc | undefined;
  let apiUrl = '';
  let primaryUrl = '';

  before(async function () {
    let bin: string;
    let user: Awaited<ReturnType<typeof serverUser>>;
    try {
      bin = pgBinDir();
      // root runs the servers as `postgres` (PostgreSQL refuses root); others as themselves
      user = await serverUser();
    } catch (err) {
      process.stdout.write(`      SKIPPED: no replica can be made on this machine: ${(err as Error).message}\n`);
      this.skip();
    }
    dir = mkdtempSync(path.join(tmpdir(), 'tributary-replica-'));
    chmodSync(dir, 0o755); // the postgres user must reach its data directories
    const [pPort, rPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const log = path.join(dir, 'primary.log');
    await initPrimary(bin, path.join(dir, 'primary'), user);
    primary = startPgServer({ name: 'primary', bin, dataDir: path.join(dir, 'primary'), port: pPort, logFile: log, user, settings: { max_connections: 100, fsync: 'off' } });
    const name = uniqueName('replica');
    primaryUrl = `postgres://postgres@127.0.0.1:${pPort}/${name}`;
    await waitPgReady(`postgres://postgres@127.0.0.1:${pPort}/postgres`, 60_000);
    await ensureDatabase(primaryUrl);
    db = createDb(primaryUrl, 4, 'replica-test');
    await migrateToLatest(db);
    replica = await setUpReplica({ primaryUrl, port: rPort, dataDir: path.join(dir, 'replica'), logFile: path.join(dir, 'replica.log'), name: 'test-replica', log: () => undefined });
    api = startCli(['serve', '--role', 'api'], {
      DATABASE_URL: primaryUrl, DATABASE_READ_URL: replica.url, REDIS_URL, REDIS_PREFIX: `${name}:`, LOG_LEVEL: 'warn', TRIBUTARY_DEV_MODE: 'true',
      PORT: String(apiPort), HOST: '127.0.0.1', POOL_SYNC_INTERVAL_MS: '0', SOLANA_RPC_URL: 'http://127.0.0.1:9', SOLANA_CLUSTER: 'localnet',
    });
    apiUrl = `http://127.0.0.1:${apiPort}`;
    await waitFor(async () => (await fetch(`${apiUrl}/v1/health`)).ok, 60_000, `api node\n${api.output()}`);
  });

  after(async () => {
    if (api && api.child.exitCode === null) { api.child.kill('SIGTERM'); await api.exited; }
    await db?.destroy();
    await replica?.stop();
    await primary?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves an event committed on the primary only once the replica has replayed it', async () => {
    const event = makeEvent('PaymentRecord', { memo: 'replica-order' }, 'replica-1');
    await sqlOn(replica!.url, 'SELECT pg_wal_replay_pause()');
    try {
      await db!.transaction().execute((trx) => archiveProjection.apply(trx, [event]));
      const onPrimary = await sqlOn(primaryUrl, `SELECT count(*)::int AS n FROM events WHERE signature = '${event.signature}'`);
      expect(onPrimary[0]!['n']).to.equal(1);
      // the query route reads the replica, whose replay is paused: not there yet
      const before = await fetch(`${apiUrl}/v1/events?signature=${event.signature}`);
      expect(before.status).to.equal(404);
      const count = await (await fetch(`${apiUrl}/v1/events/count`)).json() as { count: number };
      expect(count.count).to.equal(0);
    } finally {
      await sqlOn(replica!.url, 'SELECT pg_wal_replay_resume()');
    }
    const got = await waitFor(async () => {
      const r = await fetch(`${apiUrl}/v1/events?signature=${event.signature}`);
      return r.status === 200 ? await r.json() as { id: string; name: string } : undefined;
    }, 30_000, 'the event through the replica');
    expect(got).to.include({ id: event.id, name: 'PaymentRecord' });
  });

  it('holds the API node\'s read pool on the replica, its write pool on the primary', async () => {
    await fetch(`${apiUrl}/v1/events?limit=1`);
    const onReplica = await sqlOn(replica!.url, "SELECT application_name, count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'tributary-%' GROUP BY 1");
    expect(onReplica.map((r) => r['application_name'])).to.include('tributary-api-read');
    const standby = await sqlOn(replica!.url, 'SELECT pg_is_in_recovery() AS standby');
    expect(standby[0]!['standby']).to.equal(true);
    const streaming = await sqlOn(primaryUrl, "SELECT state FROM pg_stat_replication WHERE application_name = 'test-replica'");
    expect(streaming[0]!['state']).to.equal('streaming');
    const onPrimary = await sqlOn(primaryUrl, "SELECT DISTINCT application_name FROM pg_stat_activity WHERE application_name LIKE 'tributary-%'");
    expect(onPrimary.map((r) => r['application_name'])).to.not.include('tributary-api-read');
  });
});
