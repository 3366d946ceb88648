/**
 * The MCP server at /mcp (Streamable HTTP, MCP_ENABLED) driven by @modelcontextprotocol/sdk's
 * own Client: it lists its tools with input schemas; an agent pays the demo_report tool
 * under the x402 MCP transport with a Tributary scheme (the PaymentPayload built by
 * @x402/core's x402Client with Tributary's client schemes) and receives the result and the
 * receipt; unpaid and tampered payments are refused with the reason and nothing sent; the
 * status of the subscription it created is answered from the read model; bad input is a
 * clear tool error; no error text shows a secret.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tool answers are inspected field by field */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload } from '@x402/core/types';
import type { Keypair } from '@solana/web3.js';
import { agentPayload, catchUpReadModels, requiredOf, resignedPayload, secretsOf, SIGNATURE, startMcp, textOf, type McpHarness } from './mcp-support.js';

describe('MCP over Streamable HTTP: tools with schemas, a paid tool over the x402 MCP transport, a status query', function () {
  this.timeout(120_000);
  let m: McpHarness;
  let client: Client;
  const texts: string[] = [];
  let payer: Keypair;
  let paidWith: PaymentPayload;
  let receipt: any;

  const call = async (name: string, args: Record<string, unknown> = {}, payment?: unknown): Promise<CallToolResult> => {
    const r = await client.callTool({ name, arguments: args, ...(payment !== undefined ? { _meta: { 'x402/payment': payment } } : {}) }) as CallToolResult;
    texts.push(textOf(r));
    return r;
  };

  before(async () => {
    m = await startMcp('mcp-http');
    client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${m.mcp.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await m?.close();
  });

  it('lists its tools, each with a JSON schema of its input', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).to.include.members(['subscription_status', 'list_events', 'policy_payments', 'demo_report']);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).to.equal('object');
      expect(t.description, t.name).to.be.a('string').and.not.equal('');
    }
    expect(byName.get('subscription_status')!.inputSchema.properties).to.include.keys('walletPublicKey', 'trackingId', 'tokenMint', 'limit');
    expect(byName.get('policy_payments')!.inputSchema.required).to.deep.equal(['policy']);
  });

  it('the paid tool without payment answers isError with the PaymentRequired in structuredContent and as JSON text; nothing runs or is sent', async () => {
    const landed = m.h.txCount();
    const r = await call('demo_report');
    expect(r.isError).to.equal(true);
    const required = requiredOf(r);
    expect(required).to.include({ x402Version: 2 });
    expect(required.error).to.match(/payment required/);
    expect(required.resource.url).to.equal('mcp://tool/demo_report');
    expect(required.accepts.map((a) => a.scheme)).to.deep.equal(['deferred', 'x402://payg']);
    expect(required.accepts[0]!.extra?.['id']).to.be.a('string');
    expect(JSON.parse(textOf(r))).to.deep.equal(required);
    expect(m.h.txCount()).to.equal(landed);
  });

  it('an agent pays it with a Tributary subscription in _meta["x402/payment"]: the report, and the receipt in _meta["x402/payment-response"]', async () => {
    payer = m.h.payer();
    paidWith = await agentPayload(m.h, payer, requiredOf(await call('demo_report')));
    expect(paidWith.accepted.scheme).to.equal('deferred');
    const landed = m.h.txCount();
    const r = await call('demo_report', {}, paidWith);
    expect(r.isError, textOf(r)).to.not.equal(true);
    expect((r.structuredContent as any).content).to.match(/demo report/);
    receipt = (r._meta as any)['x402/payment-response'];
    expect(receipt).to.include({ success: true, network: 'solana:localnet', payer: payer.publicKey.toBase58() });
    expect(receipt.transaction).to.match(SIGNATURE);
    expect(receipt.extra).to.include({ created: true, scheme: 'deferred' });
    expect((r.structuredContent as any).policy).to.equal(receipt.extra.policy);
    expect(m.h.txCount()).to.equal(landed + 1);
  });

  it('the same payment sent again with a fresh proof is answered from its settlement: the same receipt, nothing sent twice; a copy is refused', async () => {
    const landed = m.h.txCount();
    const copy = await call('demo_report', {}, paidWith);
    expect(copy.isError).to.equal(true);
    expect(requiredOf(copy).error).to.match(/was used already/);
    const r = await call('demo_report', {}, resignedPayload(payer, paidWith));
    expect(r.isError, textOf(r)).to.not.equal(true);
    expect((r._meta as any)['x402/payment-response'].transaction).to.equal(receipt.transaction);
    expect(m.h.txCount()).to.equal(landed);
  });

  it('tampered payments are refused with the reason, as a PaymentRequired, and nothing is sent', async () => {
    const landed = m.h.txCount();
    const fresh = m.h.payer();
    const good = await agentPayload(m.h, fresh, requiredOf(await call('demo_report')));
    const payload = good.payload as { serializedTransaction: string; proof: { signedAt: number; signature: string } };
    const cases: [string, unknown, RegExp][] = [
      ['a proof signed by nobody', { ...good, payload: { ...payload, proof: { ...payload.proof, signature: '1'.repeat(88) } } }, /proof/i],
      ['a proof of another time', { ...good, payload: { ...payload, proof: { ...payload.proof, signedAt: payload.proof.signedAt - 1 } } }, /proof/i],
      ['another requirement id', { ...good, accepted: { ...good.accepted, extra: { ...good.accepted.extra, id: 'f'.repeat(64) } } }, /does not accept/],
      ['no accepted entry', { x402Version: 2, payload }, /x402 v2 PaymentPayload/],
      ['not an object', 'PAYMENT', /x402 v2 PaymentPayload/],
      ['a transaction cut short', { ...good, payload: { ...payload, serializedTransaction: payload.serializedTransaction.slice(0, 40) } }, /transaction/i],
    ];
    for (const [what, sent, reason] of cases) {
      const r = await call('demo_report', {}, sent);
      expect(r.isError, what).to.equal(true);
      expect(requiredOf(r).error, what).to.match(reason);
      expect(requiredOf(r).accepts, what).to.have.length(2);
    }
    expect(m.h.txCount(), 'nothing reached the chain').to.equal(landed);
  });

  it('answers the status of the subscription the agent created, by wallet and by an unknown trackingId; its events and its payment', async () => {
    await catchUpReadModels(m.h);
    const wallet = payer.publicKey.toBase58();
    const status = await call('subscription_status', { walletPublicKey: wallet });
    expect(status.isError, textOf(status)).to.not.equal(true);
    const s = status.structuredContent as any;
    expect(s.active).to.equal(true);
    expect(s.subscriptions).to.have.length(1);
    expect(s.subscriptions[0]).to.include({ address: receipt.extra.policy, owner: wallet, status: 'Active', variant: 'Subscription', paymentCount: 1 });
    const none = (await call('subscription_status', { trackingId: 'no-such-order' })).structuredContent as any;
    expect(none).to.deep.include({ active: false, subscriptions: [] });
    const events = (await call('list_events', { signature: receipt.transaction })).structuredContent as any;
    expect(events.events.length).to.be.greaterThan(0);
    expect(events.events[0].signature).to.equal(receipt.transaction);
    const payments = (await call('policy_payments', { policy: receipt.extra.policy })).structuredContent as any;
    expect(payments.payments).to.have.length(1);
  });

  it('bad tool input is a clear tool error naming what is wrong', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['subscription_status', {}, /walletPublicKey or trackingId/],
      ['subscription_status', { walletPublicKey: 'x' }, /walletPublicKey/],
      ['subscription_status', { walletPublicKey: '1'.repeat(40) }, /walletPublicKey is not a base58 public key/],
      ['subscription_status', { trackingId: 'é'.repeat(40) }, /trackingId/],
      ['list_events', { name: 'NoSuchEvent' }, /name/],
      ['list_events', { limit: 0 }, /limit/],
      ['policy_payments', {}, /policy/],
      ['policy_payments', { policy: 'z'.repeat(44) }, /policy is not a base58 public key/],
    ];
    for (const [tool, args, reason] of cases) {
      const r = await call(tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}`).to.equal(true);
      expect(textOf(r), `${tool} ${JSON.stringify(args)}`).to.match(reason);
    }
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] })) as CallToolResult;
    expect(unknown.isError).to.equal(true);
    expect(textOf(unknown)).to.match(/no_such_tool/);
  });

  it('a GET of /mcp is a 405 (stateless), a request without the Accept the transport needs a 4xx, and no tool text shows a secret', async () => {
    const get = await fetch(`${m.mcp.url}/mcp`);
    expect(get.status).to.equal(405);
    const bad = await fetch(`${m.mcp.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(bad.status).to.be.within(400, 499);
    expect(texts.length).to.be.greaterThan(10);
    for (const secret of secretsOf(m.h)) for (const t of texts) expect(t).to.not.include(secret);
  });
});
