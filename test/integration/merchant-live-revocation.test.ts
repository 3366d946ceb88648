/**
 * A merchant's live feed (Socket.IO /merchant) lasts as long as its credential. Before, the
 * handshake was the only check: a socket opened with an API key kept receiving the
 * gateway's revenue after the key was revoked, and one opened with a gateway JWT kept it
 * after the token expired, as long as the connection lived. Now, on two API nodes sharing
 * Redis: a key revoked on one node ends its feed on the other within a second, a token's
 * feed ends at its exp, a wallet that stops being the gateway's signer loses its feed at the
 * next recheck; each gets `error {code}` first, and the same credential cannot reconnect.
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
import { insertGateway, newWallet, postJson, signIn, type Wallet } from './auth-fixtures.js';
import type { PaymentNotification } from '../../queries/realtime/notification.js';

interface Feed {
  socket: Socket;
  error?: string;
  got: PaymentNotification[];
  /** the `error` message the server sent before it ended the feed */
  told?: { code: string; message: string };
  /** when the feed ended (ms) and why */
  ended?: { at: number; reason: string };
}

function connect(url: string, auth: Record<string, string>): Promise<Feed> {
  return new Promise((resolve) => {
    const socket = io(`${url}/merchant`, { path: '/ws/v1', auth, transports: ['websocket'], reconnection: false });
    const feed: Feed = { socket, got: [] };
    socket.on('payment', (m: PaymentNotification) => feed.got.push(m));
    socket.on('error', (e: { code: string; message: string }) => { feed.told = e; });
    socket.on('disconnect', (reason) => { feed.ended = { at: Date.now(), reason }; });
    socket.on('connect', () => resolve(feed));
    socket.on('connect_error', (err) => resolve({ ...feed, error: err.message }));
  });
}

describe('merchant live feed ends with its credential', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let a: TestApi;
  let b: TestApi;
  let notifier: RunningNotifier;
  const sockets: Socket[] = [];
  const feed = async (url: string, auth: Record<string, string>) => {
    const f = await connect(url, auth);
    sockets.push(f.socket);
    return f;
  };

  before(async () => {
    env = await createTestEnv('merchant_live_revoke');
    const settings = { SOLANA_RPC_URL: 'http://127.0.0.1:1', RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: '1000', GATEWAY_KEYS_CACHE_MS: '0' };
    // b rechecks its feeds only every 10 minutes: what ends a feed there within a second is the announcement
    [a, b] = await Promise.all([
      startTestApi(env, { ...settings, WS_AUTH_RECHECK_SECONDS: '1' }, { attachments: [realtimeAttachment()] }),
      startTestApi(env, { ...settings, WS_AUTH_RECHECK_SECONDS: '600' }, { attachments: [realtimeAttachment()] }),
    ]);
    notifier = await startNotifier(a.ctx, { batchSize: 100, blockMs: 100, claimIdleMs: 2000 });
  });
  after(async () => {
    for (const s of sockets) s.close();
    await notifier?.stop();
    await Promise.all([a?.close(), b?.close()]);
    await env?.close();
  });

  const gatewayOf = async (): Promise<{ gateway: string; wallet: Wallet }> => {
    const wallet = await newWallet();
    return { gateway: await insertGateway(env.db, wallet.address), wallet };
  };

  it('an API key revoked on one node ends its feed on another within a second; the key cannot reconnect', async () => {
    const { gateway, wallet } = await gatewayOf();
    const { token } = await signIn(a.url, gateway, wallet);
    const bearer = { authorization: `Bearer ${token}` };
    const created = (await (await postJson(`${a.url}/v1/gateway/${gateway}/api-keys`, { label: 'live' }, bearer)).json()) as { id: string; key: string };
    const live = await feed(b.url, { gateway, apiKey: created.key });
    const other = await feed(b.url, { gateway, token });
    expect([live.error, other.error]).to.deep.equal([undefined, undefined]);

    await appendTestEvents(env, [payment('rev-1', { gateway })]);
    await waitFor(async () => live.got.length >= 1, 20_000, 'the payment before revocation');

    const revokedAt = Date.now();
    const res = await fetch(`${a.url}/v1/gateway/${gateway}/api-keys/${created.id}`, { method: 'DELETE', headers: bearer });
    expect(res.status).to.equal(200);
    await waitFor(async () => live.ended, 5000, 'the feed to end');
    expect(live.ended!.at - revokedAt).to.be.below(1000);
    expect(live.ended!.reason).to.equal('io server disconnect');
    expect(live.told).to.include({ code: 'credential_revoked' });

    await appendTestEvents(env, [payment('rev-2', { gateway })]);
    await waitFor(async () => other.got.length >= 2, 20_000, 'the token feed to get both payments');
    expect(live.got.map((m) => m.data.trackingId)).to.deep.equal(['rev-1']);
    expect(other.ended).to.equal(undefined);

    const again = await feed(b.url, { gateway, apiKey: created.key });
    expect(again.error).to.equal('unauthorized');
  });

  it('a gateway JWT\'s feed ends at the token\'s exp; the token cannot reconnect', async () => {
    const { gateway, wallet } = await gatewayOf();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const { token } = await a.node.keyRing.sign({ role: 'gateway', signer: wallet.address }, { subject: gateway, expiresAt: exp });
    const live = await feed(b.url, { gateway, token });
    expect(live.error).to.equal(undefined);
    await waitFor(async () => live.ended, 6000, 'the feed to end at exp');
    expect(live.ended!.at).to.be.within(exp * 1000, exp * 1000 + 1000);
    expect(live.told).to.include({ code: 'token_expired' });
    expect((await feed(a.url, { gateway, token })).error).to.equal('unauthorized');
  });

  it('a wallet rotated out as the gateway\'s signer loses its feed at the next recheck', async () => {
    const authority = await newWallet();
    const signer = await newWallet();
    const gateway = await insertGateway(env.db, authority.address, signer.address);
    const { token } = await signIn(a.url, gateway, signer);
    const live = await feed(a.url, { gateway, token });
    expect(live.error).to.equal(undefined);
    const rotatedAt = Date.now();
    await env.db.updateTable('gateways').set({ signer: authority.address }).where('address', '=', gateway).execute();
    await waitFor(async () => live.ended, 5000, 'the feed to end');
    expect(live.ended!.at - rotatedAt).to.be.below(2500); // WS_AUTH_RECHECK_SECONDS=1, and the check's own reads
    expect(live.told).to.include({ code: 'unauthorized' });
    expect((await feed(b.url, { gateway, token })).error).to.equal('unauthorized');
  });
});
