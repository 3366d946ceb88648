/**
 * A hot-standby streaming replica of DATABASE_URL's primary, for the API nodes' reads
 * (DATABASE_READ_URL). The primary must be on this machine (pg_basebackup copies its
 * data directory over the replication protocol). Each start makes a fresh copy: a
 * standby left behind by an earlier run may need WAL the primary has since recycled.
 */
import path from 'node:path';
import type { ExitListener, Supervised } from './child.js';
import {
  baseBackup, ensureReplicationHba, pgBinDir, replayLagBytes, serverUser, standbySettings, startPgServer, waitPgReady, waitStreaming,
} from './postgres.js';

export interface ReplicaSetup {
  primaryUrl: string;
  port: number;
  dataDir: string;
  logFile: string;
  pgBin?: string;
  /** the name the standby gives the primary (pg_stat_replication.application_name) */
  name?: string;
  log: (line: string) => void;
  onExit?: ExitListener;
}

export interface Replica {
  name: string;
  /** DATABASE_URL with the replica's port */
  url: string;
  server: Supervised;
  /** WAL bytes the standby has not replayed yet */
  lagBytes(): Promise<number | undefined>;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export async function setUpReplica(o: ReplicaSetup): Promise<Replica> {
  const primary = new URL(o.primaryUrl);
  if (!LOOPBACK.has(primary.hostname)) throw new Error(`the replica is copied from a primary on this machine; DATABASE_URL names ${primary.hostname}`);
  const adminUrl = new URL(o.primaryUrl);
  adminUrl.pathname = '/postgres';
  const name = o.name ?? 'tributary-replica';
  const bin = pgBinDir(o.pgBin);
  const user = await serverUser();
  const hba = await ensureReplicationHba(adminUrl.toString());
  if (hba === 'added') o.log('added a loopback replication rule (trust) to the primary\'s pg_hba.conf and reloaded it');
  const started = Date.now();
  await baseBackup({ bin, primaryHost: '127.0.0.1', primaryPort: Number(primary.port || 5432), replicationUser: 'postgres', dataDir: o.dataDir, user });
  const server = startPgServer({ name: 'pg-replica', bin, dataDir: o.dataDir, port: o.port, logFile: o.logFile, user, settings: standbySettings(name), ...(o.onExit ? { onExit: o.onExit } : {}) });
  const url = new URL(o.primaryUrl);
  url.port = String(o.port);
  try {
    await waitPgReady(url.toString(), 60_000);
    await waitStreaming(adminUrl.toString(), name, 30_000);
  } catch (err) {
    await server.stop();
    throw err;
  }
  o.log(`streaming replica ${name} on 127.0.0.1:${o.port} (data ${path.relative(process.cwd(), o.dataDir) || o.dataDir}, ready in ${Date.now() - started} ms)`);
  return {
    name,
    url: url.toString(),
    server,
    lagBytes: () => replayLagBytes(adminUrl.toString(), name),
    stop: () => server.stop(),
  };
}
