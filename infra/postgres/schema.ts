/**
 * The database as kysely sees it: each projection and command area declares its own
 * tables beside its code, and they are composed here.
 */
import type { ArchiveTables } from '../../projections/archive/tables.js';
import type { RunnerTables } from '../../projections/runner/tables.js';
import type { KeysTables } from '../../commands/keys/tables.js';

export interface Database extends RunnerTables, ArchiveTables, KeysTables {}
