/**
 * Requests sent exactly as written (node:http, not fetch): fetch's URL parser would resolve
 * `..` and `%2e%2e` segments and refuse bad escapes before the server ever saw them.
 */
import http from 'node:http';

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface RawResponse { status: number; headers: http.IncomingHttpHeaders; text: string; json: unknown }

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

export function send(base: string, r: RawRequest): Promise<RawResponse> {
  const u = new URL(base);
  const headers = { ...r.headers, ...(r.body !== undefined ? { 'content-length': String(Buffer.byteLength(r.body)) } : {}) };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method: r.method, path: r.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (r.body !== undefined) req.end(r.body);
    else req.end();
  });
}

export function closeAgent(): void {
  agent.destroy();
}
