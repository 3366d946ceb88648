/**
 * Two prepaid requirements of one resource with the same credit but another price per
 * request are two agreements (their ids differ), met on chain by the same kind of OneTime
 * policy. A payer holding a credit bought under the first who paid for the second was
 * answered with the first's policy as "a paid credit with room left", and no transaction
 * was sent; every draw under the second was then refused ("bought under other terms"): the
 * payer could not buy the second while the first had room. A credit serves as the payer's
 * existing policy only for the requirement it was bought under.
 */
import { expect } from 'chai';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

describe('x402://prepaid: a credit serves only the requirement it was bought under', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let key = '';
  let cheap: AcceptedRequirement;
  let dear: AcceptedRequirement;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });

  before(async () => {
    h = await startX402('prepaid-terms');
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const terms = { scheme: 'x402://prepaid', network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV, amount: '50000' };
    const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
      resource: 'https://merchant.example/search', accepts: [{ ...terms, pricePerRequest: '1000' }, { ...terms, pricePerRequest: '5000' }],
    }, { 'x-api-key': key });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    [cheap, dear] = reg.body.accepts;
    expect(cheap!.id).to.not.equal(dear!.id);
  });
  after(async () => { await h?.close(); });

  it('buys the second credit with its own transaction, and draws from each under its own terms', async () => {
    const payer = h.payer();
    const settle = async (r: AcceptedRequirement) => {
      const s = await post('/v1/x402/settle', { x402Version: 2, paymentPayload: payloadOf((await buildPayment(r, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: r });
      expect(s.body.success, JSON.stringify(s.body)).to.equal(true);
      return s.body;
    };
    const first = await settle(cheap);
    expect(first.transaction).to.be.a('string');
    const second = await settle(dear);
    expect(second.transaction, `a transaction sent for the second requirement: ${second.paymentResponse}`).to.be.a('string');
    expect(second.policy).to.not.equal(first.policy);
    const draw = async (jwt: string, r: AcceptedRequirement) => (await post('/v1/x402/usage', { jwt, paymentRequirements: r })).body;
    expect(await draw(second.jwt, dear)).to.deep.include({ admitted: true, policy: second.policy });
    expect((await draw(second.jwt, dear)).prepaid).to.include({ chunk: '5000', used: '10000' });
    expect((await draw(first.jwt, cheap)).prepaid).to.include({ chunk: '1000', used: '1000' });
  });
});
