/**
 * Listening ports for the soak's servers, below the kernel's ephemeral range: the soak
 * opens thousands of outgoing connections (sockets, reads, receivers), and a port the OS
 * handed out as free at the start may be some connection's local port minutes later,
 * when the server it was meant for starts.
 */
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const taken = new Set<number>();

/** `count` consecutive free ports below the ephemeral range, not handed out before in this run. */
export async function listenPorts(count = 1): Promise<number> {
  const hi = Math.min(ephemeralStart(), 32768) - count;
  const lo = Math.max(10_000, hi - 12_000);
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const p = lo + Math.floor(Math.random() * (hi - lo));
    const range = Array.from({ length: count }, (_, i) => p + i);
    if (range.some((x) => taken.has(x))) continue;
    const ok = await Promise.all(range.map(free));
    if (ok.every(Boolean)) { for (const x of range) taken.add(x); return p; }
  }
  throw new Error('no free listening ports below the ephemeral range');
}
