/**
 * `tributary watch <trackingId> [--url <api>] [--since <time|signature>]`: a Socket.IO
 * client on /ws/v1 that prints each payment of a trackingId as it arrives (one JSON line
 * each), after catching up from `since`. For people trying the service, and scripts.
 */
import { io } from 'socket.io-client';
import type { ExtraCommand } from './command.js';
import { loadConfigOrExit } from './process.js';

export const watchCommand: ExtraCommand = {
  usage: 'watch <trackingId>',
  summary: 'print payments of a trackingId as they arrive over Socket.IO (--url, default http://localhost:PORT; --since <time|signature>)',
  async run(args, env) {
    const trackingId = args.positionals[1];
    if (!trackingId) throw new Error('watch needs a trackingId, e.g. `tributary watch trk-1`');
    const url = args.flags.get('url')?.[0] ?? `http://localhost:${loadConfigOrExit(env).http.port}`;
    const since = args.flags.get('since')?.[0];
    const socket = io(url, { path: '/ws/v1', transports: ['websocket'] });
    const print = (kind: string, body: unknown) => process.stdout.write(`${JSON.stringify({ [kind]: body })}\n`);
    // after a reconnect, or a catch-up the service could not finish, catch up from the last payment printed
    let last: string | undefined;
    const subscribe = () => {
      const from = last ?? since;
      socket.emit('subscribe', from === undefined ? { trackingId } : { trackingId, since: from });
    };
    socket.on('connect', subscribe);
    socket.on('ack', (a: unknown) => print('ack', a));
    socket.on('caught_up', (c: unknown) => print('caught_up', c));
    socket.on('payment', (p: { data?: { signature?: string } }) => {
      if (typeof p.data?.signature === 'string') last = p.data.signature;
      print('payment', p.data ?? p);
    });
    socket.on('error', (e: { code?: string; trackingId?: string }) => {
      print('error', e);
      // the catch-up failed (docs/interfaces.md): asked for again, live delivery going on meanwhile
      if (e.code === 'unavailable' && e.trackingId === trackingId && (last ?? since) !== undefined) setTimeout(() => { if (socket.connected) subscribe(); }, 1000);
    });
    socket.on('connect_error', (e: Error) => process.stderr.write(`tributary watch: cannot connect to ${url}: ${e.message}\n`));
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => { socket.close(); resolve(); });
      process.once('SIGTERM', () => { socket.close(); resolve(); });
    });
  },
};
