import type { ColumnType, Generated } from 'kysely';
import type { EventData } from '../../src/kernel/events/codec.js';

export interface EventsTable {
  seq: Generated<string>;
  id: string;
  name: string;
  signature: string;
  slot: ColumnType<string, string | number, never>;
  block_time: ColumnType<string | null, string | number | null, never>;
  ix_path: string;
  event_index: number;
  memo: ColumnType<Buffer | null, Buffer | null, never>;
  data: ColumnType<EventData, string, never>;
}

export interface ArchiveTables {
  events: EventsTable;
}
