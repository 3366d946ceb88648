/**
 * A logsSubscribe that stays up: reconnects with capped exponential backoff, resubscribes,
 * and detects a dead peer by ping/pong. `onSubscribed` fires after every (re)subscription
 * so the caller can repair the gap the outage left; `onLogs` fires per notification.
 */
import WebSocket from 'ws';
import type { Logger } from 'pino';

export interface LogsNotification { signature: string; err: unknown; slot: number }

export interface LogsSubscriptionOptions {
  wsUrl: string;
  /** the address whose transactions are wanted (the program id) */
  mentions: string;
  commitment: 'processed' | 'confirmed' | 'finalized';
  onLogs(n: LogsNotification): void;
  onSubscribed(): void;
  logger?: Logger;
  heartbeatMs?: number;
  maxBackoffMs?: number;
}

export interface LogsSubscription {
  connected(): boolean;
  reconnects(): number;
  close(): Promise<void>;
}

interface Incoming {
  id?: number;
  result?: unknown;
  error?: { message: string };
  method?: string;
  params?: { result?: { context?: { slot?: number }; value?: { signature?: string; err?: unknown } } };
}

export function subscribeLogs(opts: LogsSubscriptionOptions): LogsSubscription {
  const heartbeatMs = opts.heartbeatMs ?? 10_000;
  const maxBackoff = opts.maxBackoffMs ?? 5_000;
  let socket: WebSocket | undefined;
  let subscribed = false;
  let closed = false;
  let attempt = 0;
  let reconnects = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const scheduleReconnect = (): void => {
    subscribed = false;
    if (heartbeat) clearInterval(heartbeat);
    if (closed || retryTimer) return;
    const delay = Math.min(maxBackoff, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
    attempt += 1;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      reconnects += 1;
      connect();
    }, delay);
  };

  const connect = (): void => {
    const ws = new WebSocket(opts.wsUrl);
    socket = ws;
    let alive = true;
    ws.on('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logsSubscribe', params: [{ mentions: [opts.mentions] }, { commitment: opts.commitment }] }));
      heartbeat = setInterval(() => {
        if (!alive) {
          opts.logger?.warn('solana websocket missed a heartbeat; reconnecting');
          ws.terminate();
          return;
        }
        alive = false;
        ws.ping();
      }, heartbeatMs);
    });
    ws.on('pong', () => (alive = true));
    ws.on('message', (data: Buffer) => {
      alive = true;
      let msg: Incoming;
      try {
        msg = JSON.parse(data.toString('utf8')) as Incoming;
      } catch {
        return;
      }
      if (msg.id === 1) {
        if (msg.error) {
          opts.logger?.error({ err: msg.error.message }, 'logsSubscribe refused');
          ws.terminate();
          return;
        }
        subscribed = true;
        attempt = 0;
        opts.onSubscribed();
        return;
      }
      const value = msg.params?.result?.value;
      if (msg.method === 'logsNotification' && typeof value?.signature === 'string') {
        opts.onLogs({ signature: value.signature, err: value.err ?? null, slot: msg.params?.result?.context?.slot ?? 0 });
      }
    });
    ws.on('error', (err) => opts.logger?.warn({ err: err.message }, 'solana websocket error'));
    ws.on('close', () => {
      if (socket === ws) scheduleReconnect();
    });
  };

  connect();
  return {
    connected: () => subscribed,
    reconnects: () => reconnects,
    close: async () => {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (heartbeat) clearInterval(heartbeat);
      const ws = socket;
      socket = undefined;
      if (ws && ws.readyState !== WebSocket.CLOSED) {
        await new Promise<void>((resolve) => {
          ws.once('close', () => resolve());
          ws.terminate();
        });
      }
    },
  };
}
