/**
 * Live payments over Socket.IO (namespace /merchant). The browser client is the
 * socket.io-client package's own build, loaded before this script as
 * /dashboard/socket.io.min.js (the global `io`).
 */
import type { io as ioFunction, Socket } from 'socket.io-client';
import { byId } from '../shared/dom.js';
import { paymentItem } from './overview.js';
import { loadRevenue } from './revenue.js';
import { loadSubscribers } from './subscribers.js';
import { S } from './state.js';

declare global {
  interface Window { io?: typeof ioFunction }
}

interface PaymentMessage { data: { signature: string; amount: string; payer: string | null; trackingId: string | null; timestamp: number | null } }

let socket: Socket | null = null;
let liveEnded: string | null = null;

function onPayment(msg: PaymentMessage): void {
  const d = msg.data;
  const live = byId('live');
  if (live.querySelector(`[data-signature="${CSS.escape(d.signature)}"]`)) return;
  live.querySelector('.empty')?.remove();
  live.insertBefore(paymentItem({ signature: d.signature, amount: d.amount, payer: d.payer, trackingId: d.trackingId, at: d.timestamp }, true), live.firstChild);
  while (live.children.length > 50 && live.lastChild) live.removeChild(live.lastChild);
  // the read models commit a moment after the broadcast
  clearTimeout(S.refreshTimer);
  S.refreshTimer = setTimeout(() => { void loadRevenue(); void loadSubscribers(); }, 1500);
}

export function connectLive(): void {
  const io = window.io;
  if (typeof io !== 'function') return;
  socket?.close();
  const sock = io('/merchant', { path: '/ws/v1', auth: { gateway: S.gateway, token: S.token }, transports: ['websocket'] });
  socket = sock;
  const dot = byId('live-dot');
  sock.on('connect', () => { dot.className = 'dot on'; dot.title = 'live'; document.body.setAttribute('data-live', 'on'); });
  // the server ends a feed whose credential expired or was revoked (error first, then disconnect): no reconnecting then
  sock.on('error', (e: { message?: string } | undefined) => { if (e?.message) liveEnded = e.message; });
  sock.on('disconnect', (reason) => {
    dot.className = 'dot';
    dot.title = reason === 'io server disconnect' ? `ended: ${liveEnded ?? 'sign in again'}` : 'reconnecting';
  });
  sock.on('connect_error', (err) => { dot.className = 'dot'; if (/unauthorized|forbidden/.test(err.message)) sock.close(); });
  sock.on('payment', onPayment);
}

export function closeLive(): void {
  socket?.close();
  socket = null;
}
