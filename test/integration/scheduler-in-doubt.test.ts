/**
 * A scheduled payment left in doubt (signed, stored, sent; the scheduler died before it saw
 * the confirmation) is resolved from the chain. Between two reads the chain moves: the
 * transaction, processed but not yet confirmed when its status is read, is confirmed (its
 * blockhash expired) when the blockhash and the policy are read a moment later. Read in
 * that order, the scheduler recorded its own landed payment as "paid by another transaction"
 * (a failed attempt, no executed intent, the lifecycle told so). The blockhash is read first,
 * as the settler does: once it has expired at the commitment, the status read after is final.
 */
import { expect } from 'chai';
import { createLogger } from '../../infra/log/logger.js';
import type { ChainIo } from '../../commands/scheduler/chain.js';
import { send } from '../../infra/solana/sender.js';
import { startScheduler } from '../../commands/scheduler/scheduler.js';
import { waitFor } from '../support/process.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { confirmingLate } from './chain-timing.js';
import { intentStoredByDeadScheduler } from './scheduler-dead-intent.js';

describe('scheduler: a payment in doubt whose transaction confirms while it is resolved', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;

  before(async () => { s = await startSchedulerHarness('sched-in-doubt', { X402_DEMO_FREQUENCY: 'Custom:5' }); });
  after(async () => { await s?.close(); });

  it('records its own landed payment as executed, not as paid by another transaction', async () => {
    const db = s.h.env.db;
    const { policy, claimed, signed } = await intentStoredByDeadScheduler(s);
    const sent = await send(s.io, signed.wire);
    expect(sent.kind, JSON.stringify(sent)).to.equal('sent'); // sent; the scheduler died here
    await new Promise((res) => setTimeout(res, 4000)); // its lease ends

    const io: ChainIo = { ...s.io, rpc: confirmingLate(s.io.rpc, signed, 'on-blockhash-read') };
    const scheduler = startScheduler({ db, io, config: s.config, logger: createLogger('silent', 'test'), nowMs: () => Date.now() }, { autoStart: false });
    try {
      await waitFor(async () => {
        await scheduler.tick();
        const i = await db.selectFrom('execution_intents').select(['status', 'signature']).where('id', '=', claimed.id).executeTakeFirstOrThrow();
        return i.status !== 'sending' ? i : undefined;
      }, 20_000, 'the intent resolved');
    } finally {
      await scheduler.stop();
    }
    const intent = await db.selectFrom('execution_intents').selectAll().where('id', '=', claimed.id).executeTakeFirstOrThrow();
    expect([intent.status, intent.signature]).to.deep.equal(['executed', signed.signature]);
    expect(s.records(policy).filter((x) => x.signature === signed.signature), 'these bytes landed once').to.have.length(1);
    const attempts = await db.selectFrom('execution_attempts').select(['outcome', 'reason']).where('intent_id', '=', claimed.id).execute();
    expect(attempts.map((a) => a.outcome)).to.deep.equal(['executed']);
  });
});
