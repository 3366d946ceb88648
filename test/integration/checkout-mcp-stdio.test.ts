/**
 * `tributary mcp` over stdio creates a hosted checkout session for the gateway of
 * TRIBUTARY_API_KEY, the API key in the environment the agent host started it with (there
 * is no request header on stdio); without the variable the tool says what it needs.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tool answers are inspected field by field */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ROOT } from '../support/process.js';
import { textOf } from './mcp-support.js';
import { startCheckout, type CheckoutHarness } from './checkout-support.js';

describe('tributary mcp over stdio: create_checkout_session with TRIBUTARY_API_KEY', function () {
  this.timeout(120_000);
  let c: CheckoutHarness;
  const clients: Client[] = [];

  const start = async (extra: Record<string, string>): Promise<Client> => {
    const transport = new StdioClientTransport({
      command: 'npx', args: ['tsx', 'src/app/cli/bin.ts', 'mcp'], cwd: ROOT, stderr: 'pipe',
      env: { ...getDefaultEnvironment(), ...c.h.env.env, ...c.h.overrides, MCP_ENABLED: 'false', PUBLIC_BASE_URL: 'https://pay.example.com', ...extra },
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const args = () => ({ requirement: c.deferred(), trackingId: 'stdio-order-1', successUrl: 'https://merchant.example/thanks', cancelUrl: 'https://merchant.example/cart' });

  before(async () => { c = await startCheckout('checkout-mcp-stdio'); });
  after(async () => {
    for (const client of clients) await client.close();
    await c?.close();
  });

  it('acts for the key\'s gateway; without a key it names what it needs', async () => {
    const keyed = await start({ TRIBUTARY_API_KEY: c.key });
    const created = await keyed.callTool({ name: 'create_checkout_session', arguments: args() }) as CallToolResult;
    expect(created.isError, textOf(created)).to.not.equal(true);
    const { id, url } = created.structuredContent as any;
    expect(url).to.equal(`https://pay.example.com/checkout/${id}`);
    const read = await c.merchant('GET', `/v1/checkout/sessions/${id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.include({ status: 'open', trackingId: 'stdio-order-1' });

    const bare = await start({});
    const refused = await bare.callTool({ name: 'create_checkout_session', arguments: args() }) as CallToolResult;
    expect(refused.isError).to.equal(true);
    expect(textOf(refused)).to.match(/TRIBUTARY_API_KEY/);
  });
});
