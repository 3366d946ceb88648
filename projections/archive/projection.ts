/**
 * The archive: every event, once, in the append-only `events` table, the replay source of
 * every other read model (the stream is trimmed; this table is the history).
 */
import { sql } from 'kysely';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { Projection, Trx } from '../runner/projection.js';
import { bulkAppendLines } from '../runner/bulk.js';
import { COPY_NULL, copyText } from '../../infra/postgres/copy.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

/** The 64-byte memo of an event, for trackingId lookups through the memo encoding. */
export function memoBytes(e: TributaryEvent): Buffer | null {
  if (!('memo' in e.data)) return null;
  if (e.data.memo_hex !== undefined) return Buffer.from(e.data.memo_hex, 'hex');
  return textToFixedBytes(e.data.memo, 64) ?? null;
}

export function archiveRow(e: TributaryEvent) {
  return {
    id: e.id,
    name: e.name,
    signature: e.signature,
    slot: e.slot,
    block_time: e.blockTime,
    ix_path: e.ixPath,
    event_index: e.index,
    memo: memoBytes(e),
    data: JSON.stringify(e.data),
  };
}

const COLUMNS: readonly string[] = [
  'id', 'name', 'signature', 'slot', 'block_time', 'ix_path', 'event_index', 'memo', 'data',
];

/**
 * archiveRow as one line of COPY text (copy.ts copyLine's format), in COLUMNS order,
 * rendered straight from the event: no values array and no field conversion per column.
 * `memoHex` is the hex of memoBytes(e), rendered once for the line and the batch's scopes.
 */
export function archiveLine(e: TributaryEvent, memoHex: string | null): string {
  const bt = e.blockTime === null ? COPY_NULL : String(e.blockTime);
  const memo = memoHex === null ? COPY_NULL : `\\\\x${memoHex}`;
  return `${copyText(e.id)}\t${copyText(e.name)}\t${copyText(e.signature)}\t${e.slot}\t${bt}\t${copyText(e.ixPath)}\t${e.index}\t${memo}\t${copyText(JSON.stringify(e.data))}\n`;
}

const LOWER_HEX = /^(?:[0-9a-f]{2})*$/;

/** memoBytes(e) as hex (null: no memo), without the Buffer where the hex is at hand. */
export function memoHexOf(e: TributaryEvent): string | null {
  if (!('memo' in e.data)) return null;
  const hex = e.data.memo_hex;
  if (hex !== undefined) return LOWER_HEX.test(hex) ? hex : Buffer.from(hex, 'hex').toString('hex');
  const raw = Buffer.from(e.data.memo, 'utf8');
  return raw.length > 64 ? null : raw.toString('hex').padEnd(128, '0');
}

export const archiveProjection: Projection = {
  name: 'archive',
  tables: [{ name: 'events', orderBy: 'id', volatile: ['seq'] }],
  selfDeduplicating: true,
  replayable: false,
  async apply(trx: Trx, events: readonly TributaryEvent[]): Promise<ReadonlySet<string>> {
    // The lists an event can enter, its name's and its memo's (trackingId), gathered as
    // its line is rendered: while the server writes the lines before it. Rendered again on
    // bulkAppend's fallback, a line adds the same keys to the set.
    const scopes = new Set<string>();
    const line = (e: TributaryEvent): string => {
      const memoHex = memoHexOf(e);
      scopes.add(readScope.name(e.name));
      if (memoHex !== null) scopes.add(readScope.memoHex(memoHex));
      return archiveLine(e, memoHex);
    };
    // in batch order, so `seq` follows the stream as it did with one row at a time
    await bulkAppendLines(trx, 'events', COLUMNS, events, line, sql`ON CONFLICT (id) DO NOTHING`);
    return scopes;
  },
};
