/**
 * Wakes delivery workers when the webhooks projection commits outbox rows: Postgres
 * LISTEN on the channel the projection NOTIFYs in its transaction, so a notification
 * means committed rows. One dedicated connection per worker (LISTEN holds it); on any
 * error it reconnects after a pause, and the worker's poll covers the gap.
 */
import pg from '../../../infra/postgres/pg.js';
import type { Logger } from '../../../infra/log/logger.js';

export interface OutboxListener { close(): Promise<void> }

export function listenOutbox(dbUrl: string, channel: string, logger: Logger, onNotify: () => void): OutboxListener {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => { retry = undefined; void connect(); }, 1000);
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: dbUrl, application_name: 'tributary-webhooks-listen' });
    client = c;
    c.on('notification', () => onNotify());
    c.on('error', (err: Error) => {
      logger.warn({ err: err.message }, 'webhook outbox listener lost its connection; polling until it is back');
      c.end().catch(() => undefined);
      schedule();
    });
    // the server may also close the connection without an error (restart, idle timeout)
    c.on('end', () => { if (client === c) schedule(); });
    try {
      await c.connect();
      await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (closed) await c.end();
      else onNotify(); // rows committed while we were not listening
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'webhook outbox listener could not connect; polling meanwhile');
      c.end().catch(() => undefined);
      schedule();
    }
  }

  void connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
