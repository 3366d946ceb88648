/**
 * Decoding a fetched transaction: only data logged by our program's own invocations and
 * our self-CPIs become events, numbered log events first, then CPI events. Every case also
 * goes through serializeTransaction (the indexer's path: the events written straight to
 * their stream entries' text), which must give serializeEvent's text of each event.
 */
import { expect } from 'chai';
import { BorshCoder } from '@coral-xyz/anchor';
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { idl, idlEvents, PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { decodeTransaction as decodeOnly, EVENT_IX_TAG, serializeTransaction } from '../../infra/indexer/decode.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import type { TransactionJson } from '../../infra/solana/chain-reader.js';
import { dataOf, encodeEventPayload, eventFields } from '../support/anchor-events.js';

const coder = new BorshCoder(idl);
const OTHER = 'NoiseProgram1111111111111111111111111111111';
const key = new PublicKey(Buffer.alloc(32, 3));

function feeBps(oldBps: number, newBps: number): Buffer {
  const disc = Buffer.from(idlEvents.find((e) => e.name === 'GatewayFeeBpsChanged')!.discriminator);
  return Buffer.concat([disc, coder.types.encode('GatewayFeeBpsChanged', { gateway: key, old_fee_bps: oldBps, new_fee_bps: newBps })]);
}
const data = (b: Buffer): string => `Program data: ${b.toString('base64')}`;

type Inner = NonNullable<TransactionJson['meta']>['innerInstructions'];

function tx(logs: string[], inner: Inner = [], err: unknown = null): TransactionJson {
  return {
    slot: 9, blockTime: 1_700_000_000,
    transaction: { signatures: ['sig'], message: { accountKeys: ['payer', PROGRAM_ID, OTHER, 'authority'], instructions: [] } },
    meta: { err, logMessages: logs, innerInstructions: inner ?? [] },
  };
}

/** decodeTransaction, checked against serializeTransaction on the same transaction. */
function decodeTransaction(t: TransactionJson, signature: string, programId: string): ReturnType<typeof decodeOnly> {
  const out = decodeOnly(t, signature, programId);
  const written = serializeTransaction(t, signature, programId);
  expect(written.events).to.deep.equal(out.events.map((e) => ({ id: e.id, payload: serializeEvent(e) })));
  expect({ ...written, events: [] }).to.deep.equal({ ...out, events: [] });
  return out;
}

describe('indexer transaction decoding', () => {
  const logs = [
    'Program ComputeBudget111111111111111111111111111111 invoke [1]',
    'Program ComputeBudget111111111111111111111111111111 success',
    `Program ${PROGRAM_ID} invoke [1]`,
    'Program log: Instruction: ChangeGatewayFeeBps',
    data(feeBps(1, 2)),
    `Program ${OTHER} invoke [2]`,
    data(feeBps(66, 66)),
    `Program ${OTHER} success`,
    `Program ${PROGRAM_ID} invoke [2]`,
    `Program ${PROGRAM_ID} success`,
    data(feeBps(2, 3)),
    `Program ${PROGRAM_ID} success`,
    `Program ${OTHER} invoke [1]`,
    data(feeBps(77, 77)),
    `Program ${OTHER} success`,
  ];
  const cpi = [{
    index: 1,
    instructions: [
      { programIdIndex: 2, accounts: [], data: bs58.encode(feeBps(88, 88)) },
      { programIdIndex: 1, accounts: [3], data: bs58.encode(Buffer.concat([EVENT_IX_TAG, feeBps(3, 4)])) },
    ],
  }];

  it('keeps our own log lines and self-CPIs, with identities in the shared order', () => {
    const out = decodeTransaction(tx(logs, cpi), 'sig', PROGRAM_ID);
    expect(out.events.map((e) => [e.id, dataOf(e)['old_fee_bps'], dataOf(e)['new_fee_bps']])).to.deep.equal([
      ['sig:1:0', 1, 2], ['sig:1:1', 2, 3], ['sig:1.1:2', 3, 4],
    ]);
    expect(out.events[0]).to.include({ slot: 9, blockTime: 1_700_000_000, name: 'GatewayFeeBpsChanged', ixPath: '1', index: 0 });
  });

  it('yields nothing for a failed transaction, even with data in its logs', () => {
    const out = decodeTransaction(tx(logs, cpi, { InstructionError: [1, { Custom: 6004 }] }), 'sig', PROGRAM_ID);
    expect(out).to.deep.include({ events: [], failed: true });
  });

  it('counts an unknown discriminator without losing its index', () => {
    const unknown = Buffer.alloc(24, 5);
    const out = decodeTransaction(tx([`Program ${PROGRAM_ID} invoke [1]`, data(unknown), data(feeBps(5, 6)), `Program ${PROGRAM_ID} success`]), 'sig', PROGRAM_ID);
    expect(out.unknown).to.have.length(1);
    expect(out.events.map((e) => e.id)).to.deep.equal(['sig:0:1']);
  });

  it("attaches execute_payment's logged fee split to its PaymentRecord, per instruction, when the counts agree", () => {
    const record = (seed: number) => data(Buffer.from(encodeEventPayload('PaymentRecord', eventFields('PaymentRecord', {}, seed)), 'base64'));
    const split = (r: number, g: number, s: number, p: number) => `Program log: Payment executed: ${r} -> recipient, ${g} gateway fee, ${s} scheduler cut, ${p} protocol fee`;
    const out = decodeTransaction(tx([
      `Program ${PROGRAM_ID} invoke [1]`, 'Program log: Instruction: ExecutePayment', split(1000, 20, 0, 5), record(1), `Program ${PROGRAM_ID} success`,
      // another program's line that looks alike is not ours
      `Program ${PROGRAM_ID} invoke [1]`, record(2), `Program ${OTHER} invoke [2]`, split(9, 9, 9, 9), `Program ${OTHER} success`, `Program ${PROGRAM_ID} success`,
      // an older program version logs no scheduler cut
      `Program ${PROGRAM_ID} invoke [1]`, record(3), 'Program log: Payment executed: 7 -> recipient, 2 gateway fee, 1 protocol fee', `Program ${PROGRAM_ID} success`,
      // two lines for one record: which is whose is unknown, so neither is attached
      `Program ${PROGRAM_ID} invoke [1]`, record(4), split(1, 1, 1, 1), split(2, 2, 2, 2), `Program ${PROGRAM_ID} success`,
    ]), 'sig', PROGRAM_ID);
    expect(out.events.map((e) => [e.ixPath, dataOf(e)['fee_split']])).to.deep.equal([
      ['0', { recipient_amount: '1000', gateway_residual: '20', scheduler_cut: '0', protocol_cut: '5' }],
      ['1', undefined],
      ['2', { recipient_amount: '7', gateway_residual: '2', scheduler_cut: '0', protocol_cut: '1' }],
      ['3', undefined],
    ]);
  });

  it("follows only the runtime's invoke/success/failed lines: a program's text that looks like one moves nothing", () => {
    const out = decodeTransaction(tx([
      `Program ${PROGRAM_ID} invoke [1]`,
      // msg!("failed ...") and msg!("success") once read as our program's exit: the data after them was lost
      'Program log: failed to charge, retrying with the delegate', data(feeBps(1, 2)),
      'Program log: success', data(feeBps(2, 3)),
      // msg! of an invoke line does not make another program the innermost one
      `Program log: Program ${OTHER} invoke [2]`, data(feeBps(3, 4)),
      `Program ${OTHER} invoke [2]`, `Program log: Program ${PROGRAM_ID} invoke [3]`, data(feeBps(66, 66)), `Program ${OTHER} failed: custom program error: 0x1`,
      data(feeBps(4, 5)),
      `Program ${PROGRAM_ID} consumed 4000 of 200000 compute units`, `Program return: ${PROGRAM_ID} AQ==`,
      `Program ${PROGRAM_ID} success`,
      data(feeBps(77, 77)),
    ]), 'sig', PROGRAM_ID);
    expect(out.events.map((e) => [e.id, dataOf(e)['old_fee_bps'], dataOf(e)['new_fee_bps']])).to.deep.equal([
      ['sig:0:0', 1, 2], ['sig:0:1', 2, 3], ['sig:0:2', 3, 4], ['sig:0:3', 4, 5],
    ]);
  });

  it('reports a cut in the logs', () => {
    const out = decodeTransaction(tx([`Program ${PROGRAM_ID} invoke [1]`, data(feeBps(1, 2)), 'Log truncated']), 'sig', PROGRAM_ID);
    expect(out.truncated).to.equal(true);
    expect(out.events).to.have.length(1);
  });
});
