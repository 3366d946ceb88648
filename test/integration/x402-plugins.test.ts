/**
 * Tributary's schemes as x402 client plugins, paid by the ecosystem's own client:
 * @x402/fetch's wrapFetchWithPayment over an x402Client with tributaryClientSchemes
 * registered on 'solana:*' pays deferred, x402://payg, x402://prepaid and x402://upto on the standard
 * wire (the transaction and the payer's proof of possession built by the plugin, one
 * transaction each); a later request of a fresh client with the SIWX extension passes
 * without a new transaction, on the standard wire and on SPEC.md's.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Keypair } from '@solana/web3.js';
import { decodePaymentResponseHeader } from '@x402/fetch';
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x';
import { parseKeyValueHeader } from '../../commands/x402/requirements.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { ROOT } from '../support/process.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { paidFetch, ROUTES, startMerchant, USDC_DEV, walletSigner, type Merchant } from './x402-plugins-support.js';

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{87,88}$/;

describe('x402 plugins: @x402/fetch with Tributary\'s client schemes pays deferred, payg, prepaid and upto; a later request passes by SIWX', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let m: Merchant;
  const payers = new Map<string, Keypair>();
  const paid = (scheme: string): Keypair => {
    const k = payers.get(scheme);
    if (!k) throw new Error(`the ${scheme} payment test did not pass`);
    return k;
  };

  /** the policies the wallet created (its user payment's count), read from the chain */
  const policiesOf = async (wallet: Keypair): Promise<number> => {
    const up = createPdaDeriver(PROGRAM_ID).userPayment(wallet.publicKey.toBase58(), USDC_DEV);
    const read = await readProgramAccount(h.rpc, up, 'UserPayment', { programId: PROGRAM_ID, commitment: 'confirmed' });
    return read.kind === 'found' ? Number(read.data['created_policies_count']) : 0;
  };

  before(async () => {
    h = await startX402('plugins');
    m = await startMerchant(h);
  });
  after(async () => {
    await m?.close();
    await h?.close();
  });

  it('the package exports the plugins (tributary/x402/client, tributary/x402/server) with their types, @x402/core as a peer', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    for (const [sub, file] of [['./x402/client', 'client'], ['./x402/server', 'server']]) {
      expect(pkg.exports[sub!]).to.deep.equal({ types: `./dist/commands/x402/plugins/${file}.d.ts`, default: `./dist/commands/x402/plugins/${file}.js` });
      expect(existsSync(path.join(ROOT, `commands/x402/plugins/${file}.ts`))).to.equal(true);
    }
    expect(pkg.peerDependencies['@x402/core']).to.equal(pkg.dependencies['@x402/core']);
    expect(JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')).compilerOptions.declaration).to.equal(true);
  });

  for (const scheme of ['deferred', 'payg', 'prepaid', 'upto'] as const) {
    it(`pays ${scheme} through PAYMENT-SIGNATURE: one transaction, a PAYMENT-RESPONSE @x402/fetch decodes, a JWT that serves`, async () => {
      const payer = h.payer();
      const landed = h.txCount();
      const res = await paidFetch(h, payer)(`${m.base}${ROUTES[scheme]}`);
      const body = await res.json() as any;
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(h.txCount()).to.equal(landed + 1);
      const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(settled).to.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
      expect(settled.transaction).to.match(SIGNATURE);
      expect(settled.extra).to.include({ created: true });
      expect(await policiesOf(payer)).to.equal(1);
      const served = await fetch(`${m.base}${ROUTES[scheme]}`, { headers: { authorization: `Bearer ${body.jwt}` } });
      const content = await served.json() as any;
      expect(served.status, JSON.stringify(content)).to.equal(200);
      expect(content.grant).to.include({ payer: payer.publicKey.toBase58(), policy: settled.extra!['policy'] });
      payers.set(scheme, payer);
    });
  }

  for (const scheme of ['deferred', 'payg', 'prepaid'] as const) {
    it(`a fresh client of the ${scheme} payer, with no JWT, passes by Sign-In-With-X: nothing sent, no new policy`, async () => {
      const payer = paid(scheme);
      const landed = h.txCount();
      const res = await paidFetch(h, payer, { signIn: true })(`${m.base}${ROUTES[scheme]}`);
      const body = await res.json() as any;
      expect(res.status, JSON.stringify(body)).to.equal(200);
      const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(settled).to.include({ success: true, payer: payer.publicKey.toBase58() });
      expect(settled.extra).to.include({ created: false });
      expect(h.txCount()).to.equal(landed);
      expect(await policiesOf(payer)).to.equal(1);
      const served = await fetch(`${m.base}${ROUTES[scheme]}`, { headers: { authorization: `Bearer ${body.jwt}` } });
      expect(served.status).to.equal(200);
    });
  }

  it('the demo resource of the standard wire takes both: a payer pays its subscription, then a fresh client signs in', async () => {
    const payer = h.payer();
    const demo = `${h.api.url}/v1/x402/demo-standard`;
    const landed = h.txCount();
    const first = await paidFetch(h, payer)(demo);
    expect(first.status, await first.clone().text()).to.equal(200);
    expect(h.txCount()).to.equal(landed + 1);
    const again = await paidFetch(h, payer, { signIn: true })(demo);
    expect(again.status, await again.clone().text()).to.equal(200);
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).extra).to.include({ scheme: 'deferred', created: false });
    expect(h.txCount()).to.equal(landed + 1);
  });

  it('on SPEC.md\'s wire too: the 402 body declares sign-in-with-x, and the subscriber signs in with no new transaction', async () => {
    const payer = paid('deferred');
    const unpaid = await fetch(`${m.base}${ROUTES.spec}`);
    const challenge = await unpaid.json() as any;
    expect(unpaid.status).to.equal(402);
    expect(challenge.extensions['sign-in-with-x'].supportedChains).to.deep.equal([{ chainId: 'solana:localnet', type: 'ed25519' }]);
    expect(challenge.extensions['sign-in-with-x'].info).to.include({ domain: new URL(m.base).host, uri: `${m.base}${ROUTES.spec}`, version: '1' });
    const landed = h.txCount();
    const info = challenge.extensions['sign-in-with-x'].info;
    const signed = await createSIWxPayload({ ...info, chainId: 'solana:localnet', type: 'ed25519' }, walletSigner(payer), `${m.base}${ROUTES.spec}`);
    const res = await fetch(`${m.base}${ROUTES.spec}`, { headers: { 'sign-in-with-x': encodeSIWxHeader(signed) } });
    const body = await res.json() as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.jwt).to.be.a('string');
    const kv = parseKeyValueHeader(res.headers.get('payment-response')!);
    expect(kv).to.include({ scheme: 'deferred' });
    expect(kv['transaction']).to.equal(undefined);
    expect(h.txCount()).to.equal(landed);
  });
});
