/**
 * The scheduler's decisions as given/when/then: failure classes from the program's
 * errors, the dunning schedule and the cooldown, and what one pay-as-you-go charge covers.
 */
import { expect } from 'chai';
import { afterFailure, afterSuccess, type IntentCounters } from '../../commands/scheduler/decide.js';
import { classOf, failure, failureOfRpcError, failureOnChain, nameInText, nameOfTxError, pauseOnChain, programErrorText } from '../../commands/scheduler/failure.js';
import { chargeDue, planCharge } from '../../commands/settlement/plan.js';
import { parseDurationMs } from '../../src/kernel/config/config.js';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';

const opts = { nowMs: 1_000_000, dunningScheduleMs: [3_600_000, 21_600_000], retryMs: 2000, cooldownMs: 300_000 };
const fresh: IntentCounters = { status: 'pending', dunningStep: 0, consecutiveFailures: 0 };

describe('scheduler: failure classes', () => {
  it('reads program errors by name from logs, texts and custom codes', () => {
    expect(nameInText('Program log: AnchorError occurred. Error Code: InsufficientBalance. Error Number: 6007.')).to.equal('InsufficientBalance');
    expect(nameInText('Transaction simulation failed: NoDelegateSet (6008): No delegate set')).to.equal('NoDelegateSet');
    expect(nameOfTxError({ InstructionError: [1, { Custom: 6006 }] })).to.equal('PaymentNotDue');
    expect(nameOfTxError('BlockhashNotFound')).to.equal('BlockhashNotFound');
    expect(failureOfRpcError('Transaction simulation failed: Blockhash not found', { err: 'BlockhashNotFound', logs: [] }).class).to.equal('transient');
  });
  it('classes: not due, paused, completed, deleted → dropped; balance and delegation → past due; RPC → transient', () => {
    for (const c of ['PaymentNotDue', 'PolicyPaused', 'PolicyCompleted', 'PolicyNotFound', 'PolicyExpired']) expect(classOf(c), c).to.equal('dropped');
    for (const c of ['InsufficientBalance', 'NoDelegateSet', 'InsufficientDelegatedAmount']) expect(classOf(c), c).to.equal('past_due');
    for (const c of ['rpc', 'BlockhashNotFound']) expect(classOf(c), c).to.equal('transient');
    expect(classOf('Unauthorized'), 'a milestone the gateway signer may not release').to.equal('dropped');
    expect(classOf('MissingSchedulerFeeAccount')).to.equal('failed');
  });
  it('names the Anchor framework\'s and the token program\'s errors from the kernel\'s table', () => {
    expect(nameOfTxError({ InstructionError: [0, { Custom: 2003 }] })).to.equal('ConstraintRaw');
    expect(nameInText('Error processing Instruction 0: custom program error: 0xbc4')).to.equal('AccountNotInitialized');
    expect(nameInText('Error processing Instruction 0: InstructionFallbackNotFound (101): Fallback functions are not supported')).to.equal('InstructionFallbackNotFound');
    expect(programErrorText('ConstraintRaw')).to.equal('ConstraintRaw (2003)');
    expect(nameOfTxError({ InstructionError: [2, { Custom: 17 }] }, ['Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA failed: custom program error: 0x11'])).to.equal('TokenAccountFrozen');
    // the token program's texts name its errors with one-digit codes that the program's own table does not hold
    expect(nameInText('Error processing Instruction 2: InsufficientFunds (1): insufficient funds (custom program error: 0x1)')).to.equal('TokenInsufficientFunds');
  });
  it('the class of every name the kernel knows is what it was: only the scheduler\'s lists drop, dun or retry quickly', () => {
    const special: Record<string, string> = {
      ProgramPaused: 'paused', PaymentNotDue: 'dropped', PolicyPaused: 'dropped', InvalidPolicyStatusTransition: 'dropped', PolicyExpired: 'dropped', Unauthorized: 'dropped',
      InsufficientBalance: 'past_due', NoDelegateSet: 'past_due', InsufficientDelegatedAmount: 'past_due',
    };
    for (const code of [...Array(69).keys()].map((i) => 6000 + i).concat([101, 102, 2001, 2003, 2006, 2012, 3003, 3005, 3006, 3007, 3010, 3012])) {
      const name = nameOfTxError({ InstructionError: [0, { Custom: code }] });
      expect(classOf(name), `${code} ${name}`).to.equal(special[name] ?? 'failed');
    }
    for (const [code, cls] of [[1, 'past_due'], [3, 'failed'], [4, 'past_due'], [17, 'failed'], [18, 'failed']] as const) {
      expect(classOf(nameOfTxError({ InstructionError: [0, { Custom: code }] })), `token ${code}`).to.equal(cls);
    }
  });
  it('a refused send names the program\'s error once in its reason, whoever worded the message', () => {
    const bare = failureOfRpcError('Transaction simulation failed: Error processing Instruction 0: custom program error: 0x7d3', {
      err: { InstructionError: [0, { Custom: 2003 }] },
      logs: ['Program log: AnchorError caused by account: gateway. Error Code: ConstraintRaw. Error Number: 2003. Error Message: A raw constraint was violated.'],
    });
    expect(bare).to.deep.include({ class: 'failed', code: 'ConstraintRaw' });
    expect(bare.reason).to.equal('ConstraintRaw (2003): Transaction simulation failed: Error processing Instruction 0: custom program error: 0x7d3');
    const named = failureOfRpcError('Transaction simulation failed: Error processing Instruction 0: InsufficientBalance (6007): Insufficient balance for payment (custom program error: 0x1777)', {
      err: { InstructionError: [0, { Custom: 6007 }] }, logs: [],
    });
    expect(named).to.deep.include({ class: 'past_due', code: 'InsufficientBalance' });
    expect(named.reason.match(/InsufficientBalance \(6007\)/g)).to.have.length(1);
  });
  it('the program\'s emergency pause (a raw constraint on the config account) is ProgramPaused, not the payer\'s refusal', () => {
    const raw = { err: { InstructionError: [1, { Custom: 2003 }] } };
    // the localnet's message, as the soak logged it, with no logs
    const byMessage = failureOfRpcError('Transaction simulation failed: Error processing Instruction 1: ConstraintRaw (2003): A raw constraint was violated, account config', { ...raw, logs: [] });
    // the program's own: Anchor's log line names the account
    const byLog = failureOfRpcError('Transaction simulation failed: Error processing Instruction 1: custom program error: 0x7d3', {
      ...raw, logs: ['Program log: AnchorError caused by account: config. Error Code: ConstraintRaw. Error Number: 2003. Error Message: A raw constraint was violated.'],
    });
    for (const f of [byMessage, byLog]) {
      expect(f).to.deep.include({ class: 'paused', code: 'ProgramPaused' });
      expect(f.reason).to.match(/^the program is paused by its admin \(emergency pause\): charged once it is lifted \(Transaction simulation failed/);
    }
    // the creating instructions' named error reads the same
    expect(failureOfRpcError('Error processing Instruction 0: ProgramPaused (6000): Program is paused', { err: { InstructionError: [0, { Custom: 6000 }] }, logs: [] }))
      .to.deep.include({ class: 'paused', code: 'ProgramPaused' });
    // a raw constraint on another account (a config_x account does not count) stays what it was
    for (const account of ['user_payment', 'config_x']) {
      expect(failureOfRpcError(`Error processing Instruction 1: ConstraintRaw (2003): A raw constraint was violated, account ${account}`, { ...raw, logs: [] }))
        .to.deep.include({ class: 'failed', code: 'ConstraintRaw' });
    }
    // failed on chain (a status carries no logs): the config read afterwards tells
    const onChain = failureOnChain({ name: 'ConstraintRaw', err: raw.err, logs: [], message: JSON.stringify(raw.err) });
    expect(onChain).to.deep.include({ class: 'failed', code: 'ConstraintRaw' });
    expect(pauseOnChain(onChain, { data: { emergency_pause: true } })).to.deep.include({ class: 'paused', code: 'ProgramPaused' });
    expect(pauseOnChain(onChain, { data: { emergency_pause: false } })).to.equal(onChain);
  });
});

describe('scheduler: decisions', () => {
  it('past due: payment.failed and subscription.past_due first, then the dunning schedule, then given up', () => {
    const f = failure('InsufficientBalance', 'InsufficientBalance (6007)');
    const first = afterFailure(fresh, f, opts);
    expect(first).to.deep.include({ status: 'past_due', dunningStep: 1, nextAttemptAtMs: 1_000_000 + 3_600_000 });
    expect(first.events).to.deep.equal(['payment.failed', 'subscription.past_due']);
    const second = afterFailure({ status: 'past_due', dunningStep: 1, consecutiveFailures: 0 }, f, opts);
    expect(second).to.deep.include({ status: 'past_due', dunningStep: 2, nextAttemptAtMs: 1_000_000 + 21_600_000 });
    expect(second.events).to.deep.equal(['payment.failed']);
    const last = afterFailure({ status: 'past_due', dunningStep: 2, consecutiveFailures: 0 }, f, opts);
    expect(last.status).to.equal('given_up');
    expect(last.events).to.deep.equal(['payment.failed', 'subscription.canceled']);
  });
  it('a success after past due recovers; a plain success announces nothing', () => {
    expect(afterSuccess({ status: 'past_due', dunningStep: 1, consecutiveFailures: 0 }).events).to.deep.equal(['subscription.recovered']);
    expect(afterSuccess(fresh).events).to.deep.equal([]);
  });
  it('RPC errors retry within seconds; the third in a row puts the policy in cooldown', () => {
    const f = failure('rpc', 'timeout');
    const one = afterFailure(fresh, f, opts);
    expect(one).to.deep.include({ status: 'pending', consecutiveFailures: 1, nextAttemptAtMs: 1_002_000, outcome: 'retry' });
    const three = afterFailure({ ...fresh, consecutiveFailures: 2 }, f, opts);
    expect(three).to.deep.include({ outcome: 'cooldown', nextAttemptAtMs: 1_300_000, consecutiveFailures: 0 });
  });
  it('the program\'s emergency pause → tried again in seconds: no dunning step, no failure counted towards the cooldown, no event', () => {
    const f = failure('ProgramPaused', 'the program is paused by its admin');
    for (const c of [fresh, { status: 'past_due' as const, dunningStep: 1, consecutiveFailures: 2 }]) {
      const d = afterFailure(c, f, opts);
      expect(d).to.deep.include({ status: c.status, dunningStep: c.dunningStep, consecutiveFailures: c.consecutiveFailures, nextAttemptAtMs: 1_005_000, outcome: 'retry' });
      expect(d.events).to.deep.equal([]);
    }
  });
  it('not due, deleted → dropped with no event', () => {
    const d = afterFailure(fresh, failure('PolicyNotFound', 'deleted'), opts);
    expect(d).to.deep.include({ status: 'dropped', outcome: 'dropped' });
    expect(d.events).to.deep.equal([]);
  });
  it('paused → parked (the due date is owed again once resumed), its dunning step kept, no event', () => {
    const d = afterFailure({ status: 'past_due', dunningStep: 2, consecutiveFailures: 1 }, failure('PolicyPaused', 'paused'), opts);
    expect(d).to.deep.include({ status: 'paused', outcome: 'paused', dunningStep: 2, consecutiveFailures: 0 });
    expect(d.events).to.deep.equal([]);
  });
  it('durations of SCHEDULER_DUNNING_SCHEDULE', () => {
    expect(['500ms', '30s', '5m', '1h', '2d', '250'].map(parseDurationMs)).to.deep.equal([500, 30_000, 300_000, 3_600_000, 172_800_000, 250]);
    expect(parseDurationMs('1 hour')).to.equal(undefined);
  });
});

describe('settler: what one charge covers', () => {
  const t: PayAsYouGoType = {
    kind: 'PayAsYouGo', max_amount_per_period: '100', max_chunk_amount: '30', period_length_seconds: '60',
    current_period_start: '1000', current_period_total: '80', expiry_date: null,
  };
  const rows = [10, 10, 10, 10].map((c, i) => ({ request_id: `r${i}`, chunk: String(c) }));
  it('the oldest chunks up to max_chunk_amount and the room left in the chain\'s period', () => {
    expect(planCharge(rows, t, 1010)).to.deep.equal({ kind: 'charge', amount: 20n, requestIds: ['r0', 'r1'] });
    expect(planCharge(rows, { ...t, current_period_total: '0' }, 1010)).to.deep.equal({ kind: 'charge', amount: 30n, requestIds: ['r0', 'r1', 'r2'] });
  });
  it('an elapsed period has its whole cap (the program rolls it at the charge)', () => {
    expect(planCharge(rows, t, 1060)).to.deep.equal({ kind: 'charge', amount: 30n, requestIds: ['r0', 'r1', 'r2'] });
  });
  it('waits when nothing fits', () => {
    expect(planCharge(rows, { ...t, current_period_total: '95' }, 1010).kind).to.equal('wait');
  });
  it('charges at the threshold, after the interval, or before the period rolls over', () => {
    const o = { nowMs: 1_010_000, chainNowSeconds: 1010, thresholdAmount: 50n, intervalMs: 60_000, rolloverMarginSeconds: 5 };
    expect(chargeDue(10n, 1_009_000, t, o)).to.equal(false);
    expect(chargeDue(50n, 1_009_000, t, o)).to.equal(true);
    expect(chargeDue(10n, 940_000, t, o)).to.equal(true);
    expect(chargeDue(10n, 1_054_000, t, { ...o, nowMs: 1_056_000, chainNowSeconds: 1056 })).to.equal(true);
  });
});
