/**
 * A transaction in doubt is resent with the same bytes, and the node answers that resend
 * with an error that says nothing of the bytes' fate: -32005 (node is behind), after it
 * forwarded them to a leader, as a flaky node does. The transaction lands. The settler took
 * that answer as a refusal, put the usage back and charged it again in a new transaction
 * (30,000 metered, 60,000 charged, two PaymentRecords); the scheduler recorded its landed
 * payment as failed. Usage goes back only once the chain proves the transaction can never
 * land; any other answer leaves it in doubt, resolved on a later round.
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { RpcResponseError, type RpcClient } from '../../infra/solana/rpc-client.js';
import { latestBlockhash, readExecutionContext, signExecution, type ChainIo } from '../../commands/scheduler/chain.js';
import { startScheduler } from '../../commands/scheduler/scheduler.js';
import { chargeBasis, openCharge } from '../../commands/settlement/charges.js';
import { startSettler } from '../../commands/settlement/settler.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { demoPaygEnv, startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { intentStoredByDeadScheduler } from './scheduler-dead-intent.js';

const PRICE = 10_000n;

/** The localnet's RPC behind a node that forwards `wire` to the chain, then answers -32005. */
function behindAfterForwarding(rpc: RpcClient, wire: string): RpcClient & { resends: () => number } {
  let resends = 0;
  return {
    url: rpc.url,
    resends: () => resends,
    async call<T>(method: string, params: readonly unknown[] = [], opts?: { timeoutMs?: number }): Promise<T> {
      const answer = await rpc.call<T>(method, params, opts);
      if (method === 'sendTransaction' && params[0] === wire) {
        resends += 1;
        throw new RpcResponseError(-32005, 'Node is behind by 42 slots', method, { numSlotsBehind: 42 });
      }
      return answer;
    },
    async batch<T>(method: string, paramsList: readonly (readonly unknown[])[], opts?: { timeoutMs?: number }) {
      const answers = await rpc.batch<T>(method, paramsList, opts);
      return answers.map((a, k) => {
        if (method !== 'sendTransaction' || paramsList[k]?.[0] !== wire) return a;
        resends += 1;
        return new RpcResponseError(-32005, 'Node is behind by 42 slots', method, { numSlotsBehind: 42 });
      });
    },
  };
}

describe('a resend answered -32005 after the node forwarded it', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => {
    s = await startSchedulerHarness('resend-errors', {
      ...demoPaygEnv(PRICE, 500), X402_DEMO_FREQUENCY: 'Custom:5',
      SCHEDULER_DUNNING_SCHEDULE: '1s,1s,1s', // a refused charge retried at once: a double charge shows within the test
    });
  });
  after(async () => { await s?.close(); });

  it('pay-as-you-go: the charge in doubt ends charged exactly once, charged == metered', async () => {
    const db = s.h.env.db;
    const paid = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(paid.response.status).to.equal(200);
    const policy = paid.paid!.policy!;
    for (let i = 0; i < 2; i += 1) {
      expect((await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${paid.paid!.jwt}` } })).status).to.equal(200);
    }
    const rows = await db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
    const metered = rows.reduce((a, u) => a + BigInt(u.chunk), 0n);
    expect(metered).to.equal(3n * PRICE);
    // the charge stored with its signed bytes; the settler died before (or while) sending them
    const ctx = await readExecutionContext(s.io, policy);
    if ('class' in ctx) throw new Error(ctx.reason);
    const signed = signExecution(s.io, ctx, s.signer, await latestBlockhash(s.io), metered);
    const charge = await openCharge(db, {
      policy, gateway: s.gateway, amount: metered, ...chargeBasis(ctx), ...signed,
    }, rows.map((u) => u.request_id));
    expect(charge).to.have.property('status', 'sending');
    await new Promise((r) => setTimeout(r, 5500)); // in doubt once older than the settler's confirmation window

    const rpc = behindAfterForwarding(s.io.rpc, signed.wire);
    const io: ChainIo = { ...s.io, rpc };
    const settler = startSettler({ db, io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() }, { autoStart: false });
    try {
      // rounds until every metered row is in an executed charge (usage put back is charged anew)
      await waitFor(async () => {
        await settler.tick();
        const open = await db.selectFrom('payg_usage as u').leftJoin('payg_charges as c', 'c.id', 'u.charge_id').select('u.request_id')
          .where('u.policy', '=', policy).where((w) => w.or([w('c.status', 'is', null), w('c.status', '<>', 'executed')])).execute();
        if (open.length === 0) return true;
        await new Promise((r) => setTimeout(r, 1000));
        return undefined;
      }, 60_000, 'every metered row charged');
      await settler.tick();
    } finally {
      await settler.stop();
    }
    expect(rpc.resends(), 'the stored bytes were resent through the flaky node').to.be.greaterThan(0);
    const records = s.records(policy);
    expect(records.map((r) => r.signature), 'one PaymentRecord: the bytes resent').to.deep.equal([signed.signature]);
    expect(records.reduce((a, r) => a + r.amount, 0n), 'charged == metered').to.equal(metered);
    const stored = await db.selectFrom('payg_charges').select(['signature', 'status']).where('policy', '=', policy).execute();
    expect(stored.map((c) => [c.signature, c.status])).to.deep.equal([[signed.signature, 'executed']]);
  });

  it('scheduler: the intent in doubt ends executed by its own bytes, once', async () => {
    const db = s.h.env.db;
    const { policy, claimed, signed, paidBefore: before } = await intentStoredByDeadScheduler(s);
    await new Promise((res) => setTimeout(res, 4000)); // stored, never sent: the scheduler died; its lease ends

    const rpc = behindAfterForwarding(s.io.rpc, signed.wire);
    const scheduler = startScheduler({ db, io: { ...s.io, rpc }, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() }, { autoStart: false });
    try {
      await waitFor(async () => {
        await scheduler.tick();
        const i = await db.selectFrom('execution_intents').select(['status']).where('id', '=', claimed.id).executeTakeFirstOrThrow();
        return i.status !== 'sending' && i.status !== 'pending' ? i : undefined;
      }, 30_000, 'the intent resolved');
    } finally {
      await scheduler.stop();
    }
    expect(rpc.resends()).to.be.greaterThan(0);
    const intent = await db.selectFrom('execution_intents').selectAll().where('id', '=', claimed.id).executeTakeFirstOrThrow();
    expect([intent.status, intent.signature]).to.deep.equal(['executed', signed.signature]);
    expect(s.records(policy).length - before, 'one payment for the period').to.equal(1);
    const attempts = await db.selectFrom('execution_attempts').select('outcome').where('intent_id', '=', claimed.id).execute();
    expect(attempts.map((a) => a.outcome), 'no failure recorded for a payment that landed').to.deep.equal(['executed']);
  });
});
