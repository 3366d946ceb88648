/**
 * A pay-as-you-go charge left in doubt (sent, then the settler crashed) is resolved from
 * the chain. The chain moves between two reads: a transaction processed in a slot near
 * its blockhash's expiry is not confirmed yet when its status is read, and confirmed, with
 * its blockhash expired, when the blockhash is read a moment later. Read in that order the
 * settler saw "never landed, can never land", put the usage back and charged it again:
 * the payer paid twice for the same requests. The blockhash is read first: once it has
 * expired at the commitment, every bank that could hold the transaction is at or below it,
 * so the status read after it is final.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { confirmingLate } from './chain-timing.js';
import { latestBlockhash, readExecutionContext, signExecution, type ChainIo } from '../../commands/scheduler/chain.js';
import { send } from '../../infra/solana/sender.js';
import { chargeBasis, openCharge } from '../../commands/settlement/charges.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { DEMO_PATH } from './x402-harness.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

const PRICE = 10_000n;

describe('pay-as-you-go: a charge in doubt whose transaction confirms while it is resolved', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('payg-in-doubt', {
      ...demoPaygEnv(PRICE, 500),
    });
  });
  after(async () => { await s?.close(); });

  /** Three metered requests, and their charge stored and sent by a settler that died before it saw the confirmation. */
  async function chargeInDoubt() {
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    const { jwt, policy } = { jwt: paid.paid!.jwt, policy: paid.paid!.policy! };
    for (let i = 0; i < 2; i += 1) {
      const res = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${jwt}` } });
      expect(res.status).to.equal(200);
    }
    const rows = await s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
    expect(rows).to.have.length(3);
    const ctx = await readExecutionContext(s.io, policy);
    if ('class' in ctx) throw new Error(ctx.reason);
    const amount = rows.reduce((a, u) => a + BigInt(u.chunk), 0n);
    const signed = signExecution(s.io, ctx, s.signer, await latestBlockhash(s.io), amount);
    const charge = await openCharge(s.h.env.db, {
      policy, gateway: s.gateway, amount, ...chargeBasis(ctx), ...signed,
    }, rows.map((u) => u.request_id));
    expect(charge).to.have.property('status', 'sending');
    expect((await send(s.io, signed.wire)).kind).to.equal('sent');
    await new Promise((r) => setTimeout(r, 5500)); // in doubt once older than the settler's confirmation window
    return { policy, signed };
  }

  async function settleOn(rpc: RpcClient): Promise<void> {
    const io: ChainIo = { ...s.io, rpc };
    const settler = startSettler({ db: s.h.env.db, io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() }, { autoStart: false });
    try {
      for (let round = 0; round < 3; round += 1) {
        await settler.tick();
        await new Promise((r) => setTimeout(r, round === 0 ? 1000 : 5500)); // past the retry wait of usage put back, then past the in-doubt age
      }
    } finally {
      await settler.stop();
    }
  }

  async function chargedOnce(policy: string, signature: string): Promise<void> {
    const records = s.records(policy);
    expect(records.map((r) => r.signature), 'the one transaction sent, nothing charged again').to.deep.equal([signature]);
    expect(records.reduce((a, r) => a + r.amount, 0n)).to.equal(3n * PRICE);
    const stored = await s.h.env.db.selectFrom('payg_charges').selectAll().where('policy', '=', policy).execute();
    expect(stored.map((c) => [c.signature, c.status])).to.deep.equal([[signature, 'executed']]);
  }

  it('confirmed between the status read and the blockhash read: recorded, not charged again', async () => {
    const { policy, signed } = await chargeInDoubt();
    await settleOn(confirmingLate(s.io.rpc, signed, 'on-blockhash-read'));
    await chargedOnce(policy, signed.signature);
  });

  it('the resend of the same bytes refused as Blockhash not found while the first send confirms: recorded, not charged again', async () => {
    const { policy, signed } = await chargeInDoubt();
    await settleOn(confirmingLate(s.io.rpc, signed, 'on-resend'));
    await chargedOnce(policy, signed.signature);
  });

  it('does not charge a chunk still being admitted: the meter writes it to the ledger before Redis may refuse it', async () => {
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    const policy = paid.paid!.policy!;
    const [admitted] = await s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
    // a second request at the cap, in meterRequest: its chunk is in the ledger, the Redis script has not answered yet
    const ledger = createUsageLedger(s.h.env.db);
    await ledger.record({ requestId: randomUUID(), policy, gateway: s.gateway, userPayment: admitted!.user_payment ?? '', chunk: PRICE, periodStart: BigInt(admitted!.period_start) });
    const refusing = await s.h.env.db.selectFrom('payg_usage').select('request_id').where('policy', '=', policy).where('request_id', '<>', admitted!.request_id).executeTakeFirstOrThrow();
    const settler = startSettler({ db: s.h.env.db, io: s.io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() }, { autoStart: false });
    try {
      await settler.tick();
      await ledger.discard(refusing.request_id); // the script refused it: the request got 402, its chunk is taken back
      await new Promise((r) => setTimeout(r, 6000));
      await settler.tick();
    } finally {
      await settler.stop();
    }
    const charged = s.records(policy).reduce((a, r) => a + r.amount, 0n);
    expect(charged, 'only the admitted request is charged').to.equal(PRICE);
    const left = await s.h.env.db.selectFrom('payg_usage').select('request_id').where('policy', '=', policy).execute();
    expect(left.map((u) => u.request_id)).to.deep.equal([admitted!.request_id]);
  });
});
