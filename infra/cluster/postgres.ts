/**
 * PostgreSQL servers the cluster recipe and the soak run themselves, with the machine's
 * own binaries (Debian's /usr/lib/postgresql/<v>/bin): a private primary (initdb into a
 * run directory) and a streaming replica of any primary (pg_basebackup -R).
 *
 * PostgreSQL refuses to run as root, so when the supervisor is root the servers run as
 * the `postgres` user, as the machine's own cluster does; their data directories are
 * handed to that user. Unix sockets are off: everything speaks TCP on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from '../postgres/pg.js';
import { supervise, type ExitListener, type Supervised } from './child.js';

const run = promisify(execFile);

export interface OsUser { name: string; uid?: number; gid?: number }

/** The newest installed server's bin directory, e.g. /usr/lib/postgresql/15/bin. */
export function pgBinDir(override?: string): string {
  if (override) return override;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  const v = versions.find((x) => existsSync(path.join(root, x, 'bin', 'postgres')));
  if (!v) throw new Error(`no PostgreSQL server binaries under ${root}; install postgresql (apt-get install -y postgresql)`);
  return path.join(root, v, 'bin');
}

/** Who runs the servers: `postgres` when we are root, else ourselves. */
export async function serverUser(): Promise<OsUser> {
  if (process.getuid?.() !== 0) return { name: process.env['USER'] ?? 'self' };
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { name: 'postgres', uid, gid };
}

function ownDir(dir: string, user: OsUser): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dir, user.uid, user.gid);
}

async function runAs(user: OsUser, file: string, args: string[]): Promise<string> {
  try {
    const r = await run(file, args, {
      ...(user.uid !== undefined ? { uid: user.uid, gid: user.gid } : {}),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8' },
      cwd: '/tmp',
      maxBuffer: 16 * 1024 * 1024,
    });
    return `${r.stdout}${r.stderr}`;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${path.basename(file)} ${args.join(' ')} failed: ${e.stderr ?? ''}${e.stdout ?? ''}${e.message}`);
  }
}

/** A fresh data directory for a private primary; local and loopback connections trusted, replication included. */
export async function initPrimary(bin: string, dataDir: string, user: OsUser): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true });
  ownDir(dataDir, user);
  await runAs(user, path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
}

export interface PgServerOptions {
  name: string;
  bin: string;
  dataDir: string;
  port: number;
  logFile: string;
  user: OsUser;
  settings?: Readonly<Record<string, string | number>>;
  onExit?: ExitListener;
}

/** The server in the foreground, supervised; SIGINT is PostgreSQL's fast shutdown. */
export function startPgServer(o: PgServerOptions): Supervised {
  const settings: Record<string, string | number> = {
    port: o.port, listen_addresses: '127.0.0.1', unix_socket_directories: '', logging_collector: 'off', ...o.settings,
  };
  const args = ['-D', o.dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  return supervise({
    name: o.name, command: path.join(o.bin, 'postgres'), args, logFile: o.logFile, cwd: '/tmp',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    ...(o.user.uid !== undefined ? { uid: o.user.uid, gid: o.user.gid } : {}),
    stopSignal: 'SIGINT', restart: false,
  }, o.onExit);
}

export async function waitPgReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    // a server shutting down under this client sends it a FATAL; its query rejects, and the event must not crash the process
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (err) {
      last = (err as Error).message;
      await c.end().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`PostgreSQL at ${new URL(url).host} not ready after ${timeoutMs} ms: ${last}`);
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

interface HbaRule { type: string; database: string[] | null; address: string | null; netmask: string | null; auth_method: string }

const ipv4 = (s: string): number | undefined => {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  return m ? m.slice(1).reduce((a, o) => a * 256 + Number(o), 0) : undefined;
};

/** A rule that applies to a replication connection from 127.0.0.1 (whatever its method). */
export function matchesLoopbackReplication(r: HbaRule): boolean {
  if (!(r.database ?? []).includes('replication') || !['host', 'hostnossl'].includes(r.type)) return false;
  if (r.address === null || ['all', 'samehost', 'samenet'].includes(r.address)) return true;
  const a = ipv4(r.address);
  const m = ipv4(r.netmask ?? '255.255.255.255');
  const lo = ipv4('127.0.0.1')!;
  if (a === undefined || m === undefined) return false;
  // unsigned AND of 32-bit values (the >>> 0 keeps them non-negative)
  return ((a & m) >>> 0) === ((lo & m) >>> 0);
}

export const HBA_MARK = '# tributary make cluster: streaming replication from loopback';
const HBA_LINE = 'host    replication     all             127.0.0.1/32            trust';

/**
 * A primary must accept replication connections from 127.0.0.1 for pg_basebackup and the
 * walreceiver. Debian's stock pg_hba.conf has `host all all ...`, which does not cover
 * the `replication` pseudo-database, so one line is appended (once: the file is left as
 * is when any rule already allows it) and the configuration reloaded.
 */
export async function ensureReplicationHba(primaryUrl: string): Promise<'present' | 'added'> {
  // the first matching rule decides, as PostgreSQL reads the file top to bottom
  const first = async () => (await query<HbaRule>(primaryUrl,
    'SELECT type, database, address, netmask, auth_method FROM pg_hba_file_rules WHERE error IS NULL ORDER BY line_number')).find(matchesLoopbackReplication);
  const allows = async () => (await first())?.auth_method === 'trust';
  if (await allows()) return 'present';
  const earlier = await first();
  if (earlier) throw new Error(`the primary's pg_hba.conf already answers replication from 127.0.0.1 with '${earlier.auth_method}'; make it trust (or give the replica a password) and run again`);
  const file = (await query<{ hba_file: string }>(primaryUrl, 'SHOW hba_file'))[0]?.hba_file;
  if (!file) throw new Error('the primary does not report its hba_file');
  const { appendFileSync, readFileSync } = await import('node:fs');
  if (!readFileSync(file, 'utf8').includes(HBA_MARK)) appendFileSync(file, `\n${HBA_MARK}\n${HBA_LINE}\n`);
  await query(primaryUrl, 'SELECT pg_reload_conf()');
  for (let i = 0; i < 20 && !(await allows()); i += 1) await new Promise((r) => setTimeout(r, 100));
  if (!(await allows())) throw new Error(`added a replication rule to ${file} but the primary does not apply it`);
  return 'added';
}

export interface ReplicaOptions {
  bin: string;
  primaryHost: string;
  primaryPort: number;
  /** a role with REPLICATION on the primary (Debian's `postgres` has it) */
  replicationUser: string;
  dataDir: string;
  user: OsUser;
}

/**
 * A fresh standby: pg_basebackup with -R writes standby.signal and primary_conninfo, and
 * -X stream copies the WAL the backup needs. Debian keeps postgresql.conf and pg_hba.conf
 * outside the data directory, so the standby gets minimal ones of its own.
 */
export async function baseBackup(o: ReplicaOptions): Promise<void> {
  rmSync(o.dataDir, { recursive: true, force: true });
  ownDir(o.dataDir, o.user);
  await runAs(o.user, path.join(o.bin, 'pg_basebackup'), [
    '-h', o.primaryHost, '-p', String(o.primaryPort), '-U', o.replicationUser, '-D', o.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync',
  ]);
  const files: Record<string, string> = {
    'postgresql.conf': '# the standby of tributary make cluster; settings come on the command line\n',
    'pg_hba.conf': 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
  };
  for (const [name, text] of Object.entries(files)) {
    const f = path.join(o.dataDir, name);
    if (!existsSync(f)) {
      writeFileSync(f, text, { mode: 0o600 });
      if (o.user.uid !== undefined && o.user.gid !== undefined) chownSync(f, o.user.uid, o.user.gid);
    }
  }
}

/** Settings of a hot standby that names itself to the primary (pg_stat_replication.application_name). */
export const standbySettings = (name: string): Record<string, string | number> => ({
  hot_standby: 'on', cluster_name: name, max_connections: 300, hot_standby_feedback: 'on',
});

/** Waits until the primary streams to the standby named `name`. */
export async function waitStreaming(primaryUrl: string, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const rows = await query<{ state: string }>(primaryUrl, 'SELECT state FROM pg_stat_replication WHERE application_name = $1', [name]).catch(() => []);
    if (rows.some((r) => r.state === 'streaming')) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the primary does not stream to ${name} after ${timeoutMs} ms`);
}

/** Bytes of WAL the standby has yet to replay (0 = it shows everything committed so far). */
export async function replayLagBytes(primaryUrl: string, name: string): Promise<number | undefined> {
  const rows = await query<{ lag: string | null }>(primaryUrl,
    'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS lag FROM pg_stat_replication WHERE application_name = $1', [name]);
  const lag = rows[0]?.lag;
  return lag === undefined || lag === null ? undefined : Number(lag);
}
