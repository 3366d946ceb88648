/**
 * An archive row rendered straight as a COPY line (archiveLine) is the line of archiveRow
 * through copyField, byte for byte: memos given as hex (lower, upper, odd length), as
 * text (short, 64 bytes, too long), none; no block time; texts COPY must escape. The
 * memo's hex is memoBytes' as well, which the batch's read scopes are named by.
 */
import { expect } from 'chai';
import { copyLine, type CopyValue } from '../../infra/postgres/copy.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { archiveLine, archiveRow, memoBytes, memoHexOf } from '../../projections/archive/projection.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { makeEvents } from '../support/anchor-events.js';

const COLUMNS = ['id', 'name', 'signature', 'slot', 'block_time', 'ix_path', 'event_index', 'memo', 'data'] as const;

function reference(e: TributaryEvent): string {
  const row = archiveRow(e) as Record<string, CopyValue>;
  return copyLine(COLUMNS.map((c) => row[c]));
}

function check(e: TributaryEvent): void {
  expect(memoHexOf(e), e.id).to.equal(memoBytes(e)?.toString('hex') ?? null);
  expect(archiveLine(e, memoHexOf(e)), e.id).to.equal(reference(e));
}

function record(i: number, over: Record<string, unknown>, blockTime: number | null = 1_700_000_000 + i): TributaryEvent {
  const e = syntheticEvents(1, 9, i)[0]!;
  return { ...e, blockTime, data: { ...e.data, ...over } } as TributaryEvent;
}

describe('archive: rows as COPY lines', () => {
  it('every kind of event, with and without a block time: the reference row\'s line', () => {
    for (const e of [...syntheticEvents(200, 4), ...makeEvents(3000, { seed: 'archive-line', nullBlockTime: 0.1 })]) check(e);
  });

  it('memos as hex in any case or length, as text of any length, and none', () => {
    const memos: Record<string, unknown>[] = [
      { memo_hex: 'ab'.repeat(64) }, { memo_hex: 'AB'.repeat(64) }, { memo_hex: 'abc' }, { memo_hex: '' }, { memo_hex: 'zz00' },
      { memo: 'trk-1', memo_hex: undefined }, { memo: 'é'.repeat(32), memo_hex: undefined }, { memo: 'x'.repeat(65), memo_hex: undefined },
      { memo: '', memo_hex: undefined },
    ];
    for (const [i, m] of memos.entries()) check(record(i, m));
    const none = record(99, {});
    delete (none.data as Record<string, unknown>)['memo'];
    delete (none.data as Record<string, unknown>)['memo_hex'];
    expect(memoHexOf(none)).to.equal(null);
    check(none);
  });

  it('texts COPY must escape, in the envelope and in the data', () => {
    for (const [i, text] of ['back\\slash', 'tab\there', 'new\nline', 'cr\rhere', 'quote"s', 'ünïcødé ✓ 🚀', '\\N'].entries()) {
      const e = record(i, { payer: text, memo: text, memo_hex: undefined }, null);
      check({ ...e, id: `${e.id}${text}`, signature: `${e.signature}${text}`, ixPath: text });
    }
  });
});
