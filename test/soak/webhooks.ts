/**
 * Webhook receivers of the soak: a local HTTP server per fixture gateway, registered
 * through the admin key before the chain emits anything; each keeps the ledger of what
 * it received (webhook-id → times), which the soak compares with the outbox.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LedgerReceiver {
  url: string;
  gateway: string;
  webhookId?: number;
  /** webhook-id (the event id) → deliveries received */
  received: Map<string, number>;
  close(): Promise<void>;
}

export async function startLedgerReceiver(gateway: string): Promise<LedgerReceiver> {
  const received = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '');
      received.set(id, (received.get(id) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    gateway,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function registerWebhook(apiUrl: string, adminKey: string, r: LedgerReceiver): Promise<void> {
  const res = await fetch(`${apiUrl}/v1/webhooks`, {
    method: 'POST', headers: { 'x-admin-key': adminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ gateway_pubkey: r.gateway, endpoint_url: r.url }),
  });
  if (res.status !== 201) throw new Error(`webhook registration for ${r.gateway}: ${res.status} ${await res.text()}`);
  r.webhookId = (await res.json() as { id: number }).id;
}
