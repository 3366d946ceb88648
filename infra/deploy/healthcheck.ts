/**
 * The image's HEALTHCHECK: what the container's main process runs decides the probe. An API
 * node answers GET /v1/health; the localnet answers JSON-RPC getHealth; any other role is
 * healthy while it reaches PostgreSQL and Redis. Exit code 0 healthy, 1 not.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

const TIMEOUT_MS = 3000;

function mainArgs(): string[] {
  try {
    return readFileSync('/proc/1/cmdline', 'utf8').split('\0').filter((a) => a !== '');
  } catch {
    return process.argv.slice(2);
  }
}

function rolesOf(args: readonly string[]): string[] {
  const roles: string[] = [];
  args.forEach((a, i) => {
    if (a === '--role' && args[i + 1] !== undefined) roles.push(...args[i + 1]!.split(','));
    else if (a.startsWith('--role=')) roles.push(...a.slice('--role='.length).split(','));
  });
  return roles;
}

async function httpOk(url: string, init?: RequestInit): Promise<boolean> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  return res.ok;
}

function reachable(url: string | undefined, defaultPort: number): Promise<boolean> {
  if (url === undefined || url === '') return Promise.resolve(true);
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname, port: Number(u.port || defaultPort), timeout: TIMEOUT_MS });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true)).once('timeout', () => done(false)).once('error', () => done(false));
  });
}

async function healthy(): Promise<boolean> {
  const args = mainArgs();
  const env = process.env;
  if (args.includes('localnet')) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' });
    return httpOk(`http://127.0.0.1:${env['LOCALNET_PORT'] ?? '8899'}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  }
  const roles = rolesOf(args);
  if (args.includes('start') || (args.includes('serve') && (roles.length === 0 || roles.includes('api')))) {
    return httpOk(`http://127.0.0.1:${env['PORT'] ?? '3002'}/v1/health`);
  }
  const [db, redis] = await Promise.all([reachable(env['DATABASE_URL'], 5432), reachable(env['REDIS_URL'], 6379)]);
  return db && redis;
}

healthy().then(
  (ok) => process.exit(ok ? 0 : 1),
  () => process.exit(1),
);
