/**
 * Sign-In-With-X refusals on a protected route (the standard wire): a message too old,
 * expired, not yet valid, replayed, for another resource, domain or chain, badly signed,
 * not a message at all, or of a wallet holding no matching policy is a 402 whose
 * PAYMENT-REQUIRED names the reason (with a fresh challenge), never a 500; nothing is sent.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { request } from 'node:http';
import { sql } from 'kysely';
import { expect } from 'chai';
import type { Keypair } from '@solana/web3.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, type SIWxExtensionInfo } from '@x402/extensions/sign-in-with-x';
import { startX402, type X402Harness } from './x402-harness.js';
import { paidFetch, ROUTES, startMerchant, walletSigner, type Merchant } from './x402-plugins-support.js';

describe('x402 Sign-In-With-X: a stale, replayed, foreign or forged message is refused with the reason', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let m: Merchant;
  let subscriber: Keypair;
  let url = '';

  const challenge = async (at = url): Promise<SIWxExtensionInfo> => {
    const res = await fetch(at);
    expect(res.status).to.equal(402);
    return (decodePaymentRequiredHeader(res.headers.get('payment-required')!).extensions!['sign-in-with-x'] as any).info;
  };
  /** the wallet's signed answer to a fresh challenge of `from`, `edit` changing the message before it is signed */
  const signedHeader = async (wallet: Keypair, edit: (i: any) => any = (i) => i, requestUrl = url, from = url): Promise<string> => {
    const info = edit({ ...(await challenge(from)), chainId: 'solana:localnet', type: 'ed25519' });
    return encodeSIWxHeader(await createSIWxPayload(info, walletSigner(wallet), requestUrl));
  };
  const send = async (header: string, at = url) => {
    const res = await fetch(at, { headers: { 'sign-in-with-x': header } });
    return { status: res.status, headers: res.headers, body: await res.json() as any };
  };
  const expectRefused = async (header: string, reason: RegExp, at = url) => {
    const r = await send(header, at);
    expect(r.status, JSON.stringify(r.body)).to.equal(402);
    expect(r.body).to.include({ code: 'payment_required', success: false });
    expect(r.body.error).to.match(reason);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.error).to.equal(r.body.error);
    expect(pr.extensions!['sign-in-with-x']).to.be.an('object');
  };
  const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

  before(async () => {
    h = await startX402('siwx');
    m = await startMerchant(h);
    url = `${m.base}${ROUTES.deferred}`;
    subscriber = h.payer();
    const paid = await paidFetch(h, subscriber)(url);
    expect(paid.status, await paid.clone().text()).to.equal(200);
  });
  after(async () => {
    await m?.close();
    await h?.close();
  });

  it('declares a fresh challenge in every 402: this origin and resource, the route\'s chain, ed25519, a new nonce each time', async () => {
    const a = await challenge();
    const b = await challenge();
    expect(a).to.include({ domain: new URL(m.base).host, uri: url, version: '1' });
    expect(a.resources).to.deep.equal([url]);
    expect(a.nonce).to.match(/^[0-9a-f]{32}$/);
    expect(b.nonce).to.not.equal(a.nonce);
    expect(Date.parse(a.expirationTime!) - Date.parse(a.issuedAt)).to.equal(300_000);
  });

  it('answers a valid message once; the same message again is a replay', async () => {
    const header = await signedHeader(subscriber);
    const first = await send(header);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.jwt).to.be.a('string');
    await expectRefused(header, /nonce [0-9a-f]{32} was used already/);
  });

  it('refuses a message too old, expired, not yet valid or issued in the future', async () => {
    await expectRefused(await signedHeader(subscriber, (i) => ({ ...i, issuedAt: iso(-600_000) })), /invalid_siwx_issued_at_too_old/);
    await expectRefused(await signedHeader(subscriber, (i) => ({ ...i, expirationTime: iso(-1000) })), /invalid_siwx_expired/);
    await expectRefused(await signedHeader(subscriber, (i) => ({ ...i, notBefore: iso(60_000) })), /invalid_siwx_not_yet_valid/);
    await expectRefused(await signedHeader(subscriber, (i) => ({ ...i, issuedAt: iso(60_000) })), /invalid_siwx_issued_at_in_future/);
  });

  it('refuses a message for another resource, origin or chain', async () => {
    await expectRefused(await signedHeader(subscriber, (i) => ({ ...i, uri: `${m.base}${ROUTES.payg}` })), /is for .*\/payg, not this resource/);
    await expectRefused(
      await signedHeader(subscriber, (i) => ({ ...i, domain: 'evil.example', uri: 'https://evil.example/sub' }), 'https://evil.example/sub'),
      /invalid_siwx_domain_mismatch/,
    );
    await expectRefused(
      await signedHeader(subscriber, (i) => ({ ...i, chainId: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' })),
      /for chain solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp; this resource is paid on solana:localnet/,
    );
  });

  it('refuses a bad signature, a message signed by another wallet for the subscriber, and a header that is no message', async () => {
    const forged = JSON.parse(Buffer.from(await signedHeader(subscriber), 'base64').toString('utf8'));
    const other = JSON.parse(Buffer.from(await signedHeader(h.payer()), 'base64').toString('utf8'));
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');
    await expectRefused(b64({ ...other, address: subscriber.publicKey.toBase58() }), /invalid_siwx_signature/);
    await expectRefused(b64({ ...forged, signature: forged.signature.slice(0, 20) }), /invalid_siwx_malformed_signature/);
    await expectRefused('!!!', /SIGN-IN-WITH-X header is not a sign-in message: .*base64/);
    await expectRefused(b64({ domain: 'x' }), /SIGN-IN-WITH-X header is not a sign-in message/);
  });

  it('a request whose Host makes no URL is a 402 without a challenge, and its sign-in is refused, never a 500', async () => {
    const hostile = (headers: Record<string, string>) => new Promise<{ status: number; body: any }>((resolve, reject) => {
      const u = new URL(url);
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers: { host: 'a b', ...headers } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => { text += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end();
    });
    const unpaid = await hostile({});
    expect(unpaid.status, JSON.stringify(unpaid.body)).to.equal(402);
    expect(unpaid.body.extensions ?? {}).to.not.have.property('sign-in-with-x');
    const signed = await hostile({ 'sign-in-with-x': await signedHeader(subscriber) });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(402);
    expect(signed.body.error).to.match(/is not a URL/);
  });

  it('refuses a genuine wallet that holds no policy this resource accepts, and sends nothing', async () => {
    const landed = h.txCount();
    const stranger = h.payer();
    await expectRefused(await signedHeader(stranger), new RegExp(`signed in as ${stranger.publicKey.toBase58()}, which holds no policy this resource accepts`));
    expect(h.txCount()).to.equal(landed);
  });
  describe('on the service\'s own route, where a spent nonce is kept in Postgres (migration 1016)', () => {
    let demo = '';
    let payer: Keypair;
    const redisNonceKeys = async () => h.env.redis.keys(`${h.api.ctx.config.redis.prefix}x402:siwx:*`);
    before(async () => {
      demo = `${h.api.url}/v1/x402/demo-standard`;
      payer = h.payer();
      const paid = await paidFetch(h, payer)(demo);
      expect(paid.status, await paid.clone().text()).to.equal(200);
    });

    it('refuses a copy of an answered message after Redis lost its data (a restart or failover forgets every key)', async () => {
      const header = await signedHeader(payer, (i) => i, demo, demo);
      const first = await send(header, demo);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.jwt).to.be.a('string');
      // what a Redis restart or a failover to a replica without the write leaves: no key of the sign-in at all
      const keys = await redisNonceKeys();
      if (keys.length > 0) await h.env.redis.del(...keys);
      await expectRefused(header, /nonce [0-9a-f]{32} was used already/, demo);
      const nonce = JSON.parse(Buffer.from(header, 'base64').toString('utf8')).nonce as string;
      const row = await h.env.db.selectFrom('x402_siwx_nonces' as never).selectAll().where('nonce' as never, '=', nonce as never).executeTakeFirstOrThrow() as any;
      expect(row.wallet).to.equal(payer.publicKey.toBase58());
      expect(row.expires_at.getTime() - Date.now()).to.be.within(600_000, 660_000);
    });

    it('a nonce is its wallet\'s own: another wallet spending it first does not make the payer\'s message a replay', async () => {
      const info = { ...(await challenge(demo)), chainId: 'solana:localnet', type: 'ed25519' as const };
      const stranger = h.payer();
      const theirs = encodeSIWxHeader(await createSIWxPayload(info, walletSigner(stranger), demo));
      await expectRefused(theirs, /which holds no policy this resource accepts/, demo);
      const mine = encodeSIWxHeader(await createSIWxPayload(info, walletSigner(payer), demo));
      const r = await send(mine, demo);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      await expectRefused(theirs, /was used already/, demo);
    });

    it('drops the nonces whose messages are past any age at the next spend', async () => {
      const db = h.env.db;
      await sql`INSERT INTO x402_siwx_nonces (wallet, nonce, expires_at) VALUES ('old-wallet', 'old-nonce', now() - interval '1 second')`.execute(db);
      const r = await send(await signedHeader(payer, (i) => i, demo, demo), demo);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const left = await sql<{ n: string }>`SELECT count(*) AS n FROM x402_siwx_nonces WHERE expires_at < now()`.execute(db);
      expect(left.rows[0]!.n).to.equal('0');
    });
  });
});
