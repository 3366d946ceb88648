/**
 * The localnet's WebSocket pubsub, spoken raw as Solana's API defines it: subscription
 * ids, logsNotification and signatureNotification shapes, unsubscribe, and a server-side
 * drop that clients must survive.
 */
import { expect } from 'chai';
import WebSocket from 'ws';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';

interface Message { id?: number; result?: unknown; method?: string; params?: { subscription: number; result: { context: { slot: number }; value: Record<string, unknown> } } }

function connect(url: string): Promise<{ ws: WebSocket; messages: Message[]; next(pred: (m: Message) => boolean): Promise<Message> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const messages: Message[] = [];
    ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString()) as Message));
    ws.once('error', reject);
    ws.once('open', () => resolve({
      ws,
      messages,
      next: async (pred) => {
        for (let i = 0; i < 100; i += 1) {
          const hit = messages.find(pred);
          if (hit) return hit;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error('no matching websocket message');
      },
    }));
  });
}

describe('localnet websocket pubsub', function () {
  this.timeout(20_000);
  let ln: Localnet;

  before(async () => {
    ln = await startLocalnet({ port: 0, seed: 'pubsub-test', rate: 40 });
  });
  after(async () => ln.close());

  it('notifies logs of transactions mentioning the program, until unsubscribed', async () => {
    const c = await connect(ln.wsUrl);
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logsSubscribe', params: [{ mentions: [ln.fixtures.programId] }, { commitment: 'confirmed' }] }));
    const ack = await c.next((m) => m.id === 1);
    expect(ack.result).to.be.a('number');
    const note = await c.next((m) => m.method === 'logsNotification');
    expect(note.params?.subscription).to.equal(ack.result);
    expect(note.params?.result.value).to.have.keys('signature', 'err', 'logs');
    expect(note.params?.result.context.slot).to.be.a('number');
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logsUnsubscribe', params: [ack.result] }));
    expect((await c.next((m) => m.id === 2)).result).to.equal(true);
    c.ws.close();
  });

  it('answers signatureSubscribe once for a landed transaction', async () => {
    const sig = ln.ledger()[0]!.signature;
    const c = await connect(ln.wsUrl);
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'signatureSubscribe', params: [sig, { commitment: 'confirmed' }] }));
    const ack = await c.next((m) => m.id === 7);
    const note = await c.next((m) => m.method === 'signatureNotification');
    expect(note.params?.subscription).to.equal(ack.result);
    expect(note.params?.result.value).to.deep.equal({ err: null });
    c.ws.close();
  });

  it('rejects a mentions filter of several addresses', async () => {
    const c = await connect(ln.wsUrl);
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'logsSubscribe', params: [{ mentions: ['a', 'b'] }] }));
    const reply = (await c.next((m) => m.id === 3)) as { error?: { code: number } };
    expect(reply.error?.code).to.equal(-32602);
    c.ws.close();
  });

  it('drops every client server-side on request', async () => {
    const c = await connect(ln.wsUrl);
    const closed = new Promise<void>((resolve) => c.ws.once('close', () => resolve()));
    expect(ln.dropWebsockets()).to.be.at.least(1);
    await closed;
  });
});
