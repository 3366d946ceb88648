/**
 * nginx in front of the API nodes: Debian's package (installed by ensure-nginx.sh when
 * missing), a config rendered from nginx.conf.template into the run directory, and the
 * master process in the foreground as a supervised child.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { supervise, type ExitListener, type Supervised } from './child.js';

const run = promisify(execFile);

export interface NginxOptions {
  /** the repository root (the template and the install script live under it) */
  root: string;
  runDir: string;
  host: string;
  port: number;
  apiPorts: readonly number[];
  workers?: number;
  /** access log on (make cluster) or off (the soak: its load is not worth the disk) */
  accessLog?: boolean;
  onExit?: ExitListener;
}

export async function ensureNginx(root: string): Promise<string> {
  await run('bash', [path.join(root, 'infra', 'cluster', 'ensure-nginx.sh')], { maxBuffer: 16 * 1024 * 1024 })
    .catch((err: { stderr?: string; message: string }) => { throw new Error(`nginx is missing and could not be installed: ${err.stderr ?? err.message}`); });
  for (const bin of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(bin)) return bin;
  return 'nginx';
}

/** Who the workers run as: www-data (created by the package) when the master is root. */
async function workerUser(): Promise<{ line: string; uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return { line: '# not root: workers run as the current user' };
  try {
    const uid = Number((await run('id', ['-u', 'www-data'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'www-data'])).stdout.trim());
    return { line: 'user www-data;', uid, gid };
  } catch {
    return { line: 'user root;' };
  }
}

export function renderNginxConf(template: string, v: Record<string, string>): string {
  const out = template.replace(/\{\{([A-Z_]+)\}\}/g, (m, k: string) => {
    const value = v[k];
    if (value === undefined) throw new Error(`nginx template: no value for ${m}`);
    return value;
  });
  return out;
}

export async function writeNginxConf(o: NginxOptions): Promise<string> {
  const user = await workerUser();
  const temp = path.join(o.runDir, 'nginx');
  mkdirSync(path.join(o.runDir, 'logs'), { recursive: true });
  for (const d of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(path.join(temp, d), { recursive: true });
    if (user.uid !== undefined && user.gid !== undefined) chownSync(path.join(temp, d), user.uid, user.gid);
  }
  const template = readFileSync(path.join(o.root, 'infra', 'cluster', 'nginx.conf.template'), 'utf8');
  const conf = renderNginxConf(template, {
    USER_LINE: user.line,
    WORKERS: String(o.workers ?? 1),
    RUN_DIR: o.runDir,
    LISTEN: `${o.host}:${o.port}`,
    ACCESS_LOG: o.accessLog === false ? 'access_log off;' : `access_log ${o.runDir}/logs/nginx-access.log combined buffer=64k flush=1s;`,
    API_SERVERS: o.apiPorts.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join('\n'),
  });
  const file = path.join(o.runDir, 'nginx.conf');
  writeFileSync(file, conf);
  return file;
}

export async function startNginx(o: NginxOptions): Promise<Supervised> {
  const bin = await ensureNginx(o.root);
  const conf = await writeNginxConf(o);
  const args = ['-p', o.runDir, '-c', conf, '-e', path.join(o.runDir, 'logs', 'nginx-error.log'), '-g', 'daemon off;'];
  await run(bin, [...args.slice(0, 6), '-t']).catch((err: { stderr?: string; message: string }) => {
    throw new Error(`nginx rejects ${conf}: ${err.stderr ?? err.message}`);
  });
  // SIGQUIT is nginx's graceful shutdown: connections in flight finish.
  return supervise({
    name: 'nginx', command: bin, args, logFile: path.join(o.runDir, 'logs', 'nginx.log'),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, stopSignal: 'SIGQUIT', stopTimeoutMs: 10_000,
  }, o.onExit);
}
