/**
 * The archive: every event, once, in the append-only `events` table, the replay source of
 * every other read model (the stream is trimmed; this table is the history).
 */
import { sql } from 'kysely';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { Projection, Trx } from '../runner/projection.js';
import { bulkAppend } from '../runner/bulk.js';
import { readScope } from '../../src/kernel/keys/read-scopes.js';

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

/** archiveRow as COPY values, in COLUMNS order. */
const archiveValues = (e: TributaryEvent) =>
  [e.id, e.name, e.signature, e.slot, e.blockTime, e.ixPath, e.index, memoBytes(e), JSON.stringify(e.data)];

export const archiveProjection: Projection = {
  name: 'archive',
  tables: [{ name: 'events', orderBy: 'id', volatile: ['seq'] }],
  selfDeduplicating: true,
  replayable: false,
  async apply(trx: Trx, events: readonly TributaryEvent[]): Promise<ReadonlySet<string>> {
    // in batch order, so `seq` follows the stream as it did with one row at a time
    await bulkAppend(trx, 'events', COLUMNS, events, archiveValues, sql`ON CONFLICT (id) DO NOTHING`);
    // the lists an event can enter: its name's, its memo's (trackingId)
    const scopes = new Set<string>();
    for (const e of events) {
      scopes.add(readScope.name(e.name));
      const memo = memoBytes(e);
      if (memo !== null) scopes.add(readScope.memo(memo));
    }
    return scopes;
  },
};
