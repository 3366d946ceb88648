import type { ColumnType, Generated } from 'kysely';

export interface RunnerTables {
  projection_checkpoints: {
    projection: string;
    last_stream_id: string;
    events_applied: ColumnType<string, string | number, string | number>;
    updated_at: ColumnType<Date, Date | string, Date | string>;
  };
  /** Event identities each projection has applied: the dedup that makes its effect exactly-once. */
  projection_dedup: {
    projection: string;
    event_id: string;
  };
  replay_runs: {
    id: Generated<number>;
    projection: string;
    events: ColumnType<string, string | number, string | number>;
    digest: string;
    finished_at: ColumnType<Date, Date | string, Date | string>;
  };
}
