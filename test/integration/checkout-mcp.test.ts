/**
 * The checkout tools of the MCP server at /mcp, driven by @modelcontextprotocol/sdk's own
 * Client over Streamable HTTP: they are listed with schemas; create_checkout_session acts
 * for the gateway of the request's x-api-key (refused without one, or with a wrong one,
 * never echoing it); quote_checkout tells the amount, the fees and the first charge of a
 * session or a requirement; payer_subscriptions lists, for a signed-in payer's token, the
 * subscription the payer made by paying that session.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tool answers are inspected field by field */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { registerMcpRoutes } from '../../src/app/mcp/http.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startMeApi, signIn } from './payer-account-support.js';
import { catchUpReadModels, textOf } from './mcp-support.js';
import { payAsWallet, startCheckout, type CheckoutHarness } from './checkout-support.js';

describe('MCP checkout tools: quote, create with the caller\'s gateway credentials, a payer\'s subscriptions', function () {
  this.timeout(120_000);
  let c: CheckoutHarness;
  let mcp: TestApi;
  let me: TestApi;
  const clients: Client[] = [];

  const connect = async (headers: Record<string, string> = {}): Promise<Client> => {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`), { requestInit: { headers } }));
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const sessionArgs = () => ({
    requirement: c.deferred(), trackingId: 'mcp-order-1', successUrl: 'https://merchant.example/thanks', cancelUrl: 'https://merchant.example/cart', label: 'Agent plan',
  });

  before(async () => {
    c = await startCheckout('checkout-mcp', { MCP_ENABLED: 'true' });
    mcp = await startTestApi(c.h.env, { ...c.h.overrides, MCP_ENABLED: 'true' }, { modules: [registerMcpRoutes] });
    me = await startMeApi(c.h);
  });
  after(async () => {
    for (const client of clients) await client.close();
    await me?.close();
    await mcp?.close();
    await c?.close();
  });

  it('lists the checkout tools with their input schemas', async () => {
    const { tools } = await (await connect()).listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('create_checkout_session')!.inputSchema.required).to.have.members(['requirement', 'trackingId', 'successUrl', 'cancelUrl']);
    expect(byName.get('quote_checkout')!.inputSchema.properties).to.include.keys('requirement', 'sessionId');
    expect(byName.get('payer_subscriptions')!.inputSchema.required).to.deep.equal(['payerToken']);
  });

  it('create_checkout_session needs the gateway\'s credentials, and never echoes a wrong one', async () => {
    const none = await call(await connect(), 'create_checkout_session', sessionArgs());
    expect(none.isError).to.equal(true);
    expect(textOf(none)).to.match(/needs gateway credentials/);
    const wrong = `${c.key.slice(0, -4)}zzzz`;
    const bad = await call(await connect({ 'x-api-key': wrong }), 'create_checkout_session', sessionArgs());
    expect(bad.isError).to.equal(true);
    expect(textOf(bad)).to.match(/invalid or revoked x-api-key/).and.not.include(wrong);
    const invalid = await call(await connect({ 'x-api-key': c.key }), 'create_checkout_session', { ...sessionArgs(), successUrl: 'javascript:alert(1)' });
    expect(invalid.isError).to.equal(true);
    expect(textOf(invalid)).to.match(/successUrl must be an http or https URL/);
  });

  it('creates a session for the key\'s gateway, quotes it, and the payer who paid it sees the subscription', async () => {
    const agent = await connect({ 'x-api-key': c.key });
    const created = await call(agent, 'create_checkout_session', sessionArgs());
    expect(created.isError, textOf(created)).to.not.equal(true);
    const { id, url } = created.structuredContent as any;
    expect(url).to.equal(`${mcp.url}/checkout/${id}`);
    const read = await c.merchant('GET', `/v1/checkout/sessions/${id}`);
    expect(read.body).to.deep.include({ status: 'open', trackingId: 'mcp-order-1', label: 'Agent plan' });

    const quoted = await call(agent, 'quote_checkout', { sessionId: id });
    expect(quoted.isError, textOf(quoted)).to.not.equal(true);
    const q = quoted.structuredContent as any;
    expect(q).to.deep.include({ scheme: 'deferred', decimals: 6, amount: { baseUnits: '1000', ui: '0.001' } });
    expect(q.firstCharge.amount.baseUnits).to.equal(q.fees.payerPays.baseUnits);
    expect(q.fees.gatewayFee.baseUnits).to.equal(String((1000n * BigInt(q.fees.gatewayFeeBps)) / 10_000n));
    const byTerms = (await call(agent, 'quote_checkout', { requirement: c.deferred() })).structuredContent as any;
    expect(byTerms.amount).to.deep.equal(q.amount);
    expect(byTerms.fees).to.deep.equal(q.fees);

    const payer = c.h.payer();
    const { answer } = await payAsWallet(c, id, payer);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    await catchUpReadModels(c.h);
    const token = await signIn(me, payer);
    const listed = await call(agent, 'payer_subscriptions', { payerToken: token });
    expect(listed.isError, textOf(listed)).to.not.equal(true);
    const subs = (listed.structuredContent as any).subscriptions as any[];
    expect(subs.map((s) => s.address)).to.include(answer.body.policy);
    expect(subs.find((s) => s.address === answer.body.policy)).to.deep.include({ scheme: 'deferred', status: 'Active', trackingId: 'mcp-order-1' });
    const forged = await call(agent, 'payer_subscriptions', { payerToken: `${token.slice(0, -6)}AAAAAA` });
    expect(forged.isError).to.equal(true);
    expect(textOf(forged)).to.match(/invalid or expired payer token/).and.not.include(token.slice(0, 40));
  });
});
