import type { ColumnType } from 'kysely';

/** A gateway's revocation of its sessions: gateway JWTs issued before not_before are refused (session-floors.ts). */
export interface GatewaySessionFloorsTable {
  gateway: string;
  /** unix seconds; bigint, read as a decimal string */
  not_before: ColumnType<string, string, string>;
  revoked_at: ColumnType<Date, Date | undefined, Date>;
}

export interface GatewayAuthTables {
  gateway_session_floors: GatewaySessionFloorsTable;
}
