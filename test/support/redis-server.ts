/**
 * A private redis-server for tests that stop and restart Redis: the machine's shared
 * Redis serves every other test, so it is never the one stopped. Append-only file with
 * fsync on every write, as a production Redis keeps the stream across a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface RedisServer {
  port: number;
  url: string;
  /** SIGTERM, resolved once the process has exited */
  stop(): Promise<void>;
  /** starts it again on the same port and data directory */
  start(): Promise<void>;
  /** stops it (if running) and removes its data */
  close(): Promise<void>;
}

function spawnRedis(port: number, dir: string): Promise<ChildProcess> {
  const p = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--dir', dir,
  ], { stdio: 'pipe' });
  let out = '';
  return new Promise((resolve, reject) => {
    p.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) resolve(p);
    });
    p.once('error', reject);
    p.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)));
  });
}

const stopProcess = (p: ChildProcess): Promise<void> => new Promise((resolve) => {
  if (p.exitCode !== null || p.signalCode !== null) { resolve(); return; }
  p.once('exit', () => resolve());
  p.kill('SIGTERM');
});

export async function startRedisServer(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-redis-'));
  const port = await freePort();
  let proc: ChildProcess | undefined = await spawnRedis(port, dir);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (proc) await stopProcess(proc);
      proc = undefined;
    },
    async start() {
      if (!proc) proc = await spawnRedis(port, dir);
    },
    async close() {
      if (proc) await stopProcess(proc);
      proc = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
