/**
 * A ledger row whose write lost its connection while the statement ran is never charged, nor
 * kept as a draw, for the request that was refused (prepared.ts: backendsInDoubt, backendsDone).
 *
 * The meter writes a request's row before answering; when the write fails, the request is
 * answered 503 and the row taken back. A statement whose client connection broke (a network
 * reset, a proxy between the API and Postgres) runs on: its backend learns of the broken
 * connection only when it sends the answer, after its commit. Taken back at once, the DELETE
 * found nothing to delete (the row not committed yet), the row's number was closed, and the row,
 * committed a moment later, was covered by the process's next served mark: a pay-as-you-go
 * request answered 503 was charged. A prepaid draw likewise spent the payer's credit. Here the
 * statement waits on its payer's lock (1013) while its connection is cut.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startCuttingProxy, type CuttingProxy } from '../support/cutting-proxy.js';
import { waitFor } from '../support/process.js';
import { createDb, type Db } from '../../infra/postgres/database.js';
import { backendsInDoubt } from '../../infra/postgres/prepared.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { createCreditLedger } from '../../commands/x402/prepaid/ledger.js';

describe('ledger writes whose connection was lost while they ran', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let proxy: CuttingProxy;
  let proxied: Db;
  before(async () => {
    env = await createTestEnv('ledger-write-in-doubt');
    const url = new URL(env.env['DATABASE_URL']!);
    proxy = await startCuttingProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    proxied = createDb(url.toString(), 4, 'ledger-write-in-doubt');
  });
  after(async () => {
    await proxied?.destroy();
    await proxy?.close();
    await env?.close();
  });

  /** A transaction holding the advisory lock a row of `owner` waits for (1013), until `release`. */
  async function holdLock(lockName: string, owner: string): Promise<{ release: () => Promise<void> }> {
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    let held!: () => void;
    const holding = new Promise<void>((r) => { held = r; });
    const done = env.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`tributary:${lockName}:`} || ${owner}, 0))`.execute(trx);
      held();
      await released;
    });
    await holding;
    return { release: async () => { release(); await done; } };
  }
  const now = BigInt(Math.floor(Date.now() / 1000));

  for (const how of ['close', 'reset'] as const) {
    it(`pay-as-you-go, the connection ${how === 'close' ? 'closed' : 'reset'}: the row committed after its request was refused is never covered by a served mark, and is deleted`, async () => {
      const ledger = createUsageLedger(proxied, { reservationSeconds: 60 });
      const row = (requestId: string, account: string) => ({
        requestId, policy: `policy-${account}`, gateway: 'gw', userPayment: account, chunk: 10n, periodStart: now,
        periodSliceStart: 0n, accountSliceStart: 0n, accountLimit: 1000n,
      });
      const lock = await holdLock('payg_usage_slices_apart', `acct-doubt-${how}`);
      let failed: unknown;
      let takenBack: unknown = 'pending';
      try {
        proxy.cutNextRequestWith(`req-doubt-${how}`, how);
        failed = await ledger.record(row(`req-doubt-${how}`, `acct-doubt-${how}`)).then(() => undefined, (e: unknown) => e);
        expect(failed, 'the write failed with its connection').to.be.an('error');
        expect(backendsInDoubt(failed), 'the backend that may still commit it').to.have.length(1);
        // taken back as the meter does it, while the statement still waits
        await ledger.discard(`req-doubt-${how}`, failed).then(() => { takenBack = 'done'; }, (e: unknown) => { takenBack = e; });
        // a later request of the process, served: its mark covers every number before it but the one in doubt
        await ledger.record(row(`req-later-${how}`, `acct-other-${how}`));
        await ledger.served(`req-later-${how}`);
      } finally {
        // the statement gets its lock and commits; its answer goes nowhere
        await lock.release();
      }
      const state = async () => (await sql<{ served: boolean }>`SELECT payg_usage_served(u) AS served FROM payg_usage u WHERE request_id = ${`req-doubt-${how}`}`.execute(env.db)).rows[0];
      let seen = false;
      let servedOnce = false;
      await waitFor(async () => {
        const s = await state();
        if (s) { seen = true; servedOnce ||= s.served; }
        return seen && s === undefined;
      }, 10_000, 'the row committed and then deleted');
      expect(servedOnce, 'the refused request\'s row is never served (never charged)').to.equal(false);
      const later = await sql<{ served: boolean }>`SELECT payg_usage_served(u) AS served FROM payg_usage u WHERE request_id = ${`req-later-${how}`}`.execute(env.db);
      expect(later.rows[0]?.served, 'the later request is served').to.equal(true);
      expect(takenBack, 'the take-back refused while the statement could still commit (tried again by the marks\' sweep)').to.be.an('error');
    });
  }

  it('prepaid: the draw committed after its request was refused is taken back once its statement is done', async () => {
    const credits = createCreditLedger(proxied);
    const lock = await holdLock('prepaid_usage_slices_apart', 'credit-doubt');
    let failed: unknown;
    let takenBack: unknown = 'pending';
    try {
      proxy.cutNextRequestWith('draw-doubt');
      failed = await credits.recordUse({ requestId: 'draw-doubt', policy: 'credit-doubt', gateway: 'gw', amount: 10n, sliceStart: 0n }).then(() => undefined, (e: unknown) => e);
      expect(backendsInDoubt(failed)).to.have.length(1);
      await credits.discardUse('draw-doubt', failed).then(() => { takenBack = 'done'; }, (e: unknown) => { takenBack = e; });
    } finally {
      await lock.release();
    }
    const rows = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM prepaid_usage WHERE request_id = 'draw-doubt'`.execute(env.db)).rows[0]!.n);
    // taken back as the meter's retries do it, until it goes through
    if (takenBack !== 'done') await waitFor(async () => credits.discardUse('draw-doubt', failed).then(() => true, () => false), 10_000, 'the take-back');
    await new Promise((r) => setTimeout(r, 200));
    expect(await rows(), 'the credit keeps what the refused request drew').to.equal(0);
    expect(takenBack, 'not deleted while its statement could still commit').to.be.an('error');
  });
});
