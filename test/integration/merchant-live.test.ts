/**
 * Live payments for the dashboard: the Socket.IO namespace /merchant admits a socket only
 * with its gateway's JWT (or the admin key) in the handshake, and the notifier delivers
 * every payment of that gateway to it, and none of another gateway's.
 */
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { appendTestEvents } from '../support/anchor-events.js';
import { payment } from '../support/realtime-client.js';
import { waitFor } from '../support/process.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { startNotifier, type RunningNotifier } from '../../queries/realtime/notifier.js';
import { expectError, newWallet, randomKey, randomSignature, signIn } from './auth-fixtures.js';
import type { PaymentNotification } from '../../queries/realtime/notification.js';

const ADMIN = 'live-admin';

function connect(url: string, auth: Record<string, string>): Promise<{ socket: Socket; error?: string; got: PaymentNotification[] }> {
  return new Promise((resolve) => {
    const socket = io(`${url}/merchant`, { path: '/ws/v1', auth, transports: ['websocket'], reconnection: false });
    const got: PaymentNotification[] = [];
    socket.on('payment', (m: PaymentNotification) => got.push(m));
    socket.on('connect', () => resolve({ socket, got }));
    socket.on('connect_error', (err) => resolve({ socket, error: err.message, got }));
  });
}

describe('merchant live payments over Socket.IO', () => {
  let env: TestEnv;
  let api: TestApi;
  let notifier: RunningNotifier;
  const sockets: Socket[] = [];

  before(async () => {
    env = await createTestEnv('merchant_live');
    api = await startTestApi(env, { SOLANA_RPC_URL: 'http://127.0.0.1:1', ADMIN_API_KEY: ADMIN, RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000' }, { attachments: [realtimeAttachment()] });
    notifier = await startNotifier(api.ctx, { batchSize: 100, blockMs: 100, claimIdleMs: 2000 });
  });
  after(async () => {
    for (const s of sockets) s.close();
    await notifier?.stop();
    await api?.close();
    await env?.close();
  });

  it('admits its gateway JWT or the admin key, refuses the rest, and delivers only its gateway\'s payments', async () => {
    const wallet = await newWallet();
    const gateway = randomKey();
    const other = randomKey();
    await env.db.insertInto('gateways').values({
      address: gateway, authority: wallet.address, signer: wallet.address, fee_recipient: wallet.address, fee_bps: 100, name: 'g', url: '',
      active: true, deleted: false, created_at: 1, updated_at: 1, deleted_at: null, created_slot: 1, created_signature: randomSignature(),
    }).execute();
    const { token } = await signIn(api.url, gateway, wallet);

    const none = await connect(api.url, { gateway });
    const forged = await connect(api.url, { gateway, token: `${token}x` });
    const elsewhere = await connect(api.url, { gateway: other, token });
    sockets.push(none.socket, forged.socket, elsewhere.socket);
    expect([none.error, forged.error, elsewhere.error]).to.deep.equal(['unauthorized', 'unauthorized', 'forbidden']);

    const mine = await connect(api.url, { gateway, token });
    const admin = await connect(api.url, { gateway: other, adminKey: ADMIN });
    sockets.push(mine.socket, admin.socket);
    expect([mine.error, admin.error]).to.deep.equal([undefined, undefined]);

    const events = [payment('live-1', { gateway }), payment('live-2', { gateway: other }), payment('live-3', { gateway })];
    await appendTestEvents(env, events);
    await waitFor(async () => mine.got.length >= 2 && admin.got.length >= 1, 20_000, 'live payments');
    await new Promise((r) => setTimeout(r, 300));
    expect(mine.got.map((m) => m.data.trackingId)).to.deep.equal(['live-1', 'live-3']);
    expect(mine.got.every((m) => m.type === 'payment_notification' && m.data.gateway === gateway)).to.equal(true);
    expect(admin.got.map((m) => m.data.trackingId)).to.deep.equal(['live-2']);
    // the HTTP side refuses the same forged token
    await expectError(await fetch(`${api.url}/v1/gateway/${gateway}/merchant/overview`, { headers: { authorization: `Bearer ${token}x` } }), 401);
  });
});
