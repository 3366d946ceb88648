/**
 * One gateway's signer row that does not open (tampered, sealed under another key) stops
 * that gateway only: the other gateway's due subscription payment is still executed and
 * its pay-as-you-go usage still settled, in the same rounds. The bad one is loud: an
 * error log naming it, signer_error kept for `tributary status` and the gateway's
 * scheduler status, and tributary_scheduler_signer_unreadable{gateway} = 1 on /metrics.
 */
import { expect } from 'chai';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import type { Logger } from '../../infra/log/logger.js';
import { activeSigners, delegateGateway } from '../../commands/scheduler/signers.js';
import { syncGatewayStates } from '../../commands/scheduler/gateway-sync.js';
import { reportLines, schedulerReport } from '../../commands/scheduler/report.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;

describe('scheduler: one unreadable signer row stops only its gateway', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('sched-signers', {
      X402_DEMO_FREQUENCY: 'Custom:5', X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_PERIOD_SECONDS: '3600',
      PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: '300',
    });
  });
  after(async () => { await s?.close(); });

  it('the other gateway executes and settles; the bad one is logged, reported and on /metrics', async () => {
    const other = s.h.ln.fixtures.gateways[1]!;
    const secret = (other as { signerSecretKey?: string }).signerSecretKey ?? other.authoritySecretKey;
    await delegateGateway(s.h.env.db, { gateway: other.address, authority: other.authority, encryptionKey: undefined, source: 'fixtures', keypair: Keypair.fromSecretKey(bs58.decode(secret)) });
    expect(await syncGatewayStates(s.h.env.db, s.io)).to.include.members([s.gateway, other.address]);
    // a row sealed under a key this service does not have (or tampered with)
    await s.h.env.db.updateTable('scheduler_gateways').set({ secret: 'aes-256-gcm:v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA:AAAA' }).where('gateway', '=', other.address).execute();

    const logged: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const capture = {
      error: (obj: Record<string, unknown>, msg: string) => void logged.push({ level: 'error', obj, msg }),
      info: (obj: Record<string, unknown>, msg: string) => void logged.push({ level: 'info', obj, msg }),
    } as unknown as Logger;
    const opened = await activeSigners(s.h.env.db, undefined, capture);
    expect([...opened.keys()]).to.deep.equal([s.gateway]);
    expect(logged).to.have.length(1);
    expect(logged[0]).to.deep.include({ level: 'error' });
    expect(logged[0]!.obj['gateway']).to.equal(other.address);

    const scheduler = s.scheduler();
    const settler = s.settler();
    const sub = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    expect(sub.response.status).to.equal(200);
    const metered = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(metered.response.status).to.equal(200);
    const res = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${metered.paid!.jwt}` } });
    expect(res.status).to.equal(200);

    await waitFor(async () => s.records(sub.paid!.policy!).length >= 2, 30_000, 'the good gateway\'s scheduled payment');
    const charged = () => s.records(metered.paid!.policy!).reduce((a, r) => a + r.amount, 0n);
    await waitFor(async () => charged() === 2n * PRICE, 30_000, 'the good gateway\'s metered usage settled');
    await Promise.all([scheduler.stop(), settler.stop()]);

    const row = await s.h.env.db.selectFrom('scheduler_gateways').select(['state', 'signer_error']).where('gateway', '=', other.address).executeTakeFirstOrThrow();
    expect(row.state).to.equal('active');
    expect(row.signer_error).to.match(/does not decrypt|not set/);
    const report = await schedulerReport(s.h.env.db, s.io, 0);
    expect(report.signers.find((x) => x.gateway === other.address)?.signerError).to.equal(row.signer_error);
    expect(report.signers.find((x) => x.gateway === s.gateway)?.signerError).to.equal(null);
    expect(reportLines(report).join('\n')).to.include(`ERROR   signer     ${other.address} does not open`);
    const metrics = await (await fetch(`${s.h.api.url}/metrics`)).text();
    expect(metrics).to.include(`tributary_scheduler_signer_unreadable{gateway="${other.address}"} 1`);
    expect(metrics).to.include(`tributary_scheduler_signer_unreadable{gateway="${s.gateway}"} 0`);
  });
});
