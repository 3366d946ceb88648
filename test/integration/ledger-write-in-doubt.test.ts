/**
 * A ledger row whose statement failed after Postgres committed it (a restart terminating the
 * connection before the answer came back) is taken back: its request is refused, so the row
 * must not stay. Seen in the soak: one pay-as-you-go reservation left by a request answered 503
 * during a PostgreSQL restart, counted unsettled after the drain (it would have been dropped at
 * its bound, 300 s later, and counted in the payer's outstanding until then); a prepaid row left
 * so would spend the credit on a request never served.
 *
 * The ledgers are the real ones on Postgres; only what their caller hears is changed: each
 * write goes through and then reports the error a lost connection gives.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { createCreditLedger } from '../../commands/x402/prepaid/ledger.js';
import { meterRequest } from '../../commands/x402/metering.js';
import { drawCredit } from '../../commands/x402/prepaid/meter.js';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';

const lost = (): Error => new Error('Connection terminated unexpectedly');

async function failure(p: Promise<unknown>): Promise<string> {
  return p.then(() => 'admitted', (err: unknown) => (err as Error).message);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('ledger rows written while their statement was reported failed', function () {
  this.timeout(20_000);
  let env: TestEnv;
  before(async () => { env = await createTestEnv('ledger-write-in-doubt'); });
  after(async () => { await env.close(); });

  it('takes back a pay-as-you-go reservation whose request was refused', async () => {
    const real = createUsageLedger(env.db);
    const ledger = { ...real, record: async (u: Parameters<typeof real.record>[0]) => { await real.record(u); throw lost(); } };
    const now = Math.floor(Date.now() / 1000);
    const type: PayAsYouGoType = {
      kind: 'PayAsYouGo', max_amount_per_period: '1000000', max_chunk_amount: '1000', period_length_seconds: '86400',
      current_period_start: String(now - 60), current_period_total: '0', expiry_date: null,
    };
    const requestId = 'payg-in-doubt';
    const metered = meterRequest(env.redis, env.prefix, 'policy-doubt', type, 10n, now, { ledger, requestId, gateway: 'gw', userPayment: 'account-doubt' },
      { amount: 1_000_000n, exposure: 1_000_000n, refuse: () => 'unfunded' });
    expect(await failure(metered)).to.equal('Connection terminated unexpectedly');
    await until('the reservation taken back', async () =>
      (await env.db.selectFrom('payg_usage').select('request_id').where('request_id', '=', requestId).execute()).length === 0);
  });

  it('takes back a prepaid draw whose request was refused, so the credit is not spent on it', async () => {
    const real = createCreditLedger(env.db);
    const ledger = { ...real, recordUse: async (u: Parameters<typeof real.recordUse>[0]) => { await real.recordUse(u); throw lost(); } };
    const requestId = 'prepaid-in-doubt';
    const drawn = drawCredit(env.redis, env.prefix, 'credit-doubt', 1000n, 10n, Math.floor(Date.now() / 1000), ledger, { requestId, gateway: 'gw' });
    expect(await failure(drawn)).to.equal('Connection terminated unexpectedly');
    await until('the draw taken back', async () =>
      (await env.db.selectFrom('prepaid_usage').select('request_id').where('request_id', '=', requestId).execute()).length === 0);
  });
});
