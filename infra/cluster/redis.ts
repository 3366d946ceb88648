/**
 * Private Redis servers for the cluster recipe and the soak (never the machine's shared
 * 6379, which other work uses): a redis-server with an append-only file in a run
 * directory, and a Sentinel monitoring it (`redis-server <conf> --sentinel`, what
 * Debian's redis-sentinel package runs), so roles can reach Redis through Sentinel.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { supervise, type ExitListener, type Supervised } from './child.js';

export interface RedisServerOptions {
  name: string;
  port: number;
  dir: string;
  logFile: string;
  onExit?: ExitListener;
}

/**
 * AOF with fsync once a second, as a production Redis keeps the stream across restarts; a
 * clean stop (SIGTERM) writes the whole file, so a restart loses nothing.
 */
export function startRedisServer(o: RedisServerOptions): Supervised {
  mkdirSync(o.dir, { recursive: true });
  return supervise({
    name: o.name, command: 'redis-server', logFile: o.logFile, cwd: o.dir, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    args: ['--port', String(o.port), '--bind', '127.0.0.1', '--dir', o.dir, '--appendonly', 'yes', '--appendfsync', 'everysec',
      '--save', '', '--daemonize', 'no', '--maxclients', '10000'],
    restart: false,
  }, o.onExit);
}

export interface SentinelOptions {
  name: string;
  port: number;
  dir: string;
  logFile: string;
  masterName: string;
  masterPort: number;
  onExit?: ExitListener;
}

/** A Sentinel of one (quorum 1): enough to prove that clients find the master through it. */
export function startSentinel(o: SentinelOptions): Supervised {
  mkdirSync(o.dir, { recursive: true });
  // Sentinel rewrites its own configuration file, so it gets one of its own in the run dir.
  const conf = path.join(o.dir, 'sentinel.conf');
  writeFileSync(conf, [
    `port ${o.port}`, 'bind 127.0.0.1', `dir ${o.dir}`,
    `sentinel monitor ${o.masterName} 127.0.0.1 ${o.masterPort} 1`,
    `sentinel down-after-milliseconds ${o.masterName} 5000`,
    `sentinel failover-timeout ${o.masterName} 60000`, '',
  ].join('\n'));
  return supervise({
    name: o.name, command: 'redis-server', args: [conf, '--sentinel'], logFile: o.logFile, cwd: o.dir,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, restart: true,
  }, o.onExit);
}

export async function waitRedisReady(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    try {
      await r.connect();
      if ((await r.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      r.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`Redis on 127.0.0.1:${port} not ready after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Resolves once the Sentinel names the master at the expected port. */
export async function waitSentinelMaster(port: number, masterName: string, masterPort: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => 100 });
  r.on('error', () => undefined);
  try {
    for (;;) {
      const addr = await r.call('SENTINEL', 'get-master-addr-by-name', masterName).catch(() => null) as string[] | null;
      if (addr && Number(addr[1]) === masterPort) return;
      if (Date.now() > deadline) throw new Error(`Sentinel on ${port} does not name ${masterName} at ${masterPort}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  } finally {
    r.disconnect();
  }
}
