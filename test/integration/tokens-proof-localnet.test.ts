/**
 * Issue 15, "Proven by": /v1/tokens/issue for a fixture wallet of the localnet that holds a
 * policy it paid for through the 402 flow, indexed and projected as in production. Only the
 * wallet's own signature over a fresh challenge gets the bundle; no proof, another wallet's
 * proof, or a nonce used twice gets 401.
 */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { postJson } from './auth-fixtures.js';

describe('tokens/issue on the localnet: a fixture wallet with a policy', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  before(async () => { s = await startSchedulerHarness('tokens-ln'); });
  after(async () => { await s?.close(); });

  const challenge = async (wallet: string): Promise<string> => {
    const res = await postJson(`${s.h.api.url}/v1/tokens/challenge`, { walletPublicKey: wallet });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { nonce: string }).nonce;
  };
  const sign = async (nonce: string, k: Keypair): Promise<string> => bs58.encode(await ed.signAsync(new TextEncoder().encode(nonce), k.secretKey.slice(0, 32)));
  const issue = (body: Record<string, unknown>) => postJson(`${s.h.api.url}/v1/tokens/issue`, body);

  it('gives the bundle only to the wallet that signs its own challenge, once per nonce', async () => {
    const spare = s.h.ln.fixtures.wallets.find((w) => w.role === 'spare')!;
    const wallet = Keypair.fromSecretKey(bs58.decode(spare.secretKey));
    const address = wallet.publicKey.toBase58();
    const deferred = (await s.h.accepts())[0]!;
    const paid = await fetch(`${s.h.api.url}${DEMO_PATH}`, { headers: { payment: (await buildPayment(deferred, { wallet, rpc: s.h.rpc })).header } });
    expect(paid.status, await paid.clone().text()).to.equal(200);
    await waitFor(async () => (await s.h.env.db.selectFrom('payment_policies').select('address').where('owner', '=', address).execute()).length > 0,
      60_000, 'the paid policy in the read model');

    const noProof = await issue({ walletPublicKey: address });
    expect(noProof.status).to.equal(401);
    expect(((await noProof.json()) as { code?: string }).code).to.equal('proof_required');

    const stranger = Keypair.generate();
    const n1 = await challenge(address);
    expect((await issue({ walletPublicKey: address, nonce: n1, signature: await sign(n1, stranger) })).status).to.equal(401);

    const n2 = await challenge(address);
    const own = await issue({ walletPublicKey: address, nonce: n2, signature: await sign(n2, wallet) });
    const bundle = (await own.json()) as { policies?: { address: string }[] };
    expect(own.status, JSON.stringify(bundle)).to.equal(200);
    expect(bundle.policies?.length).to.be.at.least(1);

    expect((await issue({ walletPublicKey: address, nonce: n2, signature: await sign(n2, wallet) })).status, 'a nonce used twice').to.equal(401);
  });
});
