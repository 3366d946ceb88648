/**
 * Solana's WebSocket pubsub for what the service uses: logsSubscribe (all, or
 * {mentions:[address]}), signatureSubscribe (one notification, then gone), slotSubscribe,
 * and their unsubscribe methods. Every transaction is final once appended, so every
 * commitment level is notified at once.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { Chain, TxRecord } from './chain.js';
import { INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR } from './rpc-errors.js';

type Sub =
  | { kind: 'logs'; socket: WebSocket; mentions: string | null }
  | { kind: 'signature'; socket: WebSocket; signature: string }
  | { kind: 'slot'; socket: WebSocket };

export interface PubsubServer {
  /** closes every client connection server-side (tests use it to prove reconnection) */
  dropConnections(): number;
  close(): Promise<void>;
  ready: Promise<void>;
}

export function createPubsubServer(chain: Chain, port: number, host: string, log?: Logger): PubsubServer {
  const wss = new WebSocketServer({ port, host });
  const subs = new Map<number, Sub>();
  let nextId = 0;

  const send = (socket: WebSocket, body: unknown): void => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(body));
  };
  const notify = (id: number, sub: Sub, method: string, result: unknown): void =>
    send(sub.socket, { jsonrpc: '2.0', method, params: { result, subscription: id } });

  const signatureDone = (id: number, sub: Sub, tx: TxRecord): void => {
    notify(id, sub, 'signatureNotification', { context: { slot: tx.slot }, value: { err: tx.err } });
    subs.delete(id);
  };

  const offTx = chain.onTransaction((tx) => {
    const mentioned = new Set(tx.accountKeys);
    for (const [id, sub] of subs) {
      if (sub.kind === 'logs' && (sub.mentions === null || mentioned.has(sub.mentions))) {
        notify(id, sub, 'logsNotification', { context: { slot: tx.slot }, value: { signature: tx.signature, err: tx.err, logs: tx.logs } });
      } else if (sub.kind === 'signature' && sub.signature === tx.signature) {
        signatureDone(id, sub, tx);
      }
    }
  });
  const offSlot = chain.onSlot((slot) => {
    for (const [id, sub] of subs) {
      if (sub.kind === 'slot') notify(id, sub, 'slotNotification', { parent: slot - 1, root: Math.max(0, slot - 32), slot });
    }
  });

  const subscribe = (socket: WebSocket, method: string, params: unknown[]): number => {
    const id = (nextId += 1);
    if (method === 'logsSubscribe') {
      const filter = params[0];
      if (filter === 'all' || filter === 'allWithVotes') subs.set(id, { kind: 'logs', socket, mentions: null });
      else {
        const mentions = (filter as { mentions?: unknown })?.mentions;
        if (!Array.isArray(mentions) || mentions.length !== 1 || typeof mentions[0] !== 'string') {
          throw new Error('Invalid Request: Only 1 address supported');
        }
        subs.set(id, { kind: 'logs', socket, mentions: mentions[0] });
      }
    } else if (method === 'signatureSubscribe') {
      if (typeof params[0] !== 'string') throw new Error('Invalid params: signature must be a string');
      const sub: Sub = { kind: 'signature', socket, signature: params[0] };
      subs.set(id, sub);
      const landed = chain.transaction(params[0]);
      // answer first, then notify, so the client knows the subscription id
      if (landed) setImmediate(() => subs.has(id) && signatureDone(id, sub, landed));
    } else subs.set(id, { kind: 'slot', socket });
    return id;
  };

  const handle = (socket: WebSocket, raw: string): void => {
    let req: { id?: unknown; method?: unknown; params?: unknown };
    try {
      req = JSON.parse(raw) as typeof req;
    } catch {
      return send(socket, { jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'Parse error' } });
    }
    const id = typeof req.id === 'number' || typeof req.id === 'string' ? req.id : null;
    const method = typeof req.method === 'string' ? req.method : '';
    const params = Array.isArray(req.params) ? (req.params as unknown[]) : [];
    if (['logsSubscribe', 'signatureSubscribe', 'slotSubscribe'].includes(method)) {
      try {
        return send(socket, { jsonrpc: '2.0', id, result: subscribe(socket, method, params) });
      } catch (e) {
        return send(socket, { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: (e as Error).message } });
      }
    }
    if (['logsUnsubscribe', 'signatureUnsubscribe', 'slotUnsubscribe'].includes(method)) {
      const subId = params[0];
      if (typeof subId !== 'number') return send(socket, { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: 'Invalid params' } });
      const ok = subs.get(subId)?.socket === socket && subs.delete(subId);
      if (!ok) return send(socket, { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: 'Invalid subscription id.' } });
      return send(socket, { jsonrpc: '2.0', id, result: true });
    }
    const code = method ? METHOD_NOT_FOUND : INVALID_REQUEST;
    return send(socket, { jsonrpc: '2.0', id, error: { code, message: method ? 'Method not found' : 'Invalid request' } });
  };

  wss.on('connection', (socket) => {
    socket.on('message', (data: Buffer) => handle(socket, data.toString('utf8')));
    socket.on('close', () => {
      for (const [id, sub] of subs) if (sub.socket === socket) subs.delete(id);
    });
    socket.on('error', (err) => log?.debug({ err }, 'localnet websocket error'));
  });

  const ready = new Promise<void>((resolve, reject) => {
    wss.once('listening', () => resolve());
    wss.once('error', reject);
  });

  return {
    ready,
    dropConnections: () => {
      let n = 0;
      for (const client of wss.clients) {
        client.terminate();
        n += 1;
      }
      return n;
    },
    close: () => new Promise<void>((resolve) => {
      offTx();
      offSlot();
      for (const client of wss.clients) client.terminate();
      wss.close(() => resolve());
    }),
  };
}
