/**
 * `tributary mcp` as an agent starts it: a child process speaking MCP over stdio, driven by
 * @modelcontextprotocol/sdk's own Client and StdioClientTransport, bound to the test's
 * database, Redis prefix and localnet. It lists its tools with schemas, sells demo_report
 * under the x402 MCP transport (an agent pays with a Tributary subscription built by
 * @x402/core's x402Client; a tampered payment is refused, nothing sent), answers the status
 * of the subscription, and keeps secrets out of its errors.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tool answers are inspected field by field */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, waitFor } from '../support/process.js';
import { agentPayload, catchUpReadModels, requiredOf, secretsOf, SIGNATURE, startMcp, textOf, type McpHarness } from './mcp-support.js';

describe('tributary mcp over stdio: a child process the MCP SDK\'s client drives', function () {
  this.timeout(120_000);
  let m: McpHarness;
  let client: Client;
  let transport: StdioClientTransport;
  const texts: string[] = [];
  let stderr = '';

  const call = async (name: string, args: Record<string, unknown> = {}, payment?: unknown): Promise<CallToolResult> => {
    const r = await client.callTool({ name, arguments: args, ...(payment !== undefined ? { _meta: { 'x402/payment': payment } } : {}) }) as CallToolResult;
    texts.push(textOf(r));
    return r;
  };

  before(async () => {
    m = await startMcp('mcp-stdio');
    transport = new StdioClientTransport({
      command: 'npx', args: ['tsx', 'src/app/cli/bin.ts', 'mcp'], cwd: ROOT, stderr: 'pipe',
      // MCP_ENABLED is the HTTP mount's switch: stdio serves without it
      env: { ...getDefaultEnvironment(), ...m.h.env.env, ...m.h.overrides, MCP_ENABLED: 'false' },
    });
    transport.stderr?.on('data', (b: Buffer) => { stderr += b.toString(); });
    client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await m?.close();
  });

  it('lists its tools with input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.include.members(['subscription_status', 'list_events', 'policy_payments', 'demo_report']);
    for (const t of tools) expect(t.inputSchema.type, t.name).to.equal('object');
    expect(tools.find((t) => t.name === 'list_events')!.inputSchema.properties).to.include.keys('signature', 'name', 'trackingId');
  });

  it('an agent pays demo_report: unpaid, the PaymentRequired; a tampered payment refused; a good one, the report and its receipt', async () => {
    const unpaid = await call('demo_report');
    expect(unpaid.isError).to.equal(true);
    expect(requiredOf(unpaid).accepts[0]!.scheme).to.equal('deferred');
    const payer = m.h.payer();
    const payment = await agentPayload(m.h, payer, requiredOf(unpaid));
    const landed = m.h.txCount();
    const proof = (payment.payload as any).proof;
    const tampered = await call('demo_report', {}, { ...payment, payload: { ...payment.payload, proof: { ...proof, signature: '1'.repeat(88) } } });
    expect(tampered.isError).to.equal(true);
    expect(requiredOf(tampered).error).to.match(/proof/i);
    expect(m.h.txCount()).to.equal(landed);
    const paid = await call('demo_report', {}, payment);
    expect(paid.isError, textOf(paid)).to.not.equal(true);
    const receipt = (paid._meta as any)['x402/payment-response'];
    expect(receipt).to.include({ success: true, payer: payer.publicKey.toBase58() });
    expect(receipt.transaction).to.match(SIGNATURE);
    expect(m.h.txCount()).to.equal(landed + 1);

    await catchUpReadModels(m.h);
    const status = (await call('subscription_status', { walletPublicKey: payer.publicKey.toBase58() })).structuredContent as any;
    expect(status.active).to.equal(true);
    expect(status.subscriptions.map((s: any) => s.address)).to.deep.equal([receipt.extra.policy]);
  });

  it('bad input is a clear tool error; no tool text and no log line shows a secret; stdout carried the protocol alone', async () => {
    const r = await call('subscription_status', {});
    expect(r.isError).to.equal(true);
    expect(textOf(r)).to.match(/walletPublicKey or trackingId/);
    const bad = await call('policy_payments', { policy: 42 });
    expect(bad.isError).to.equal(true);
    expect(textOf(bad)).to.match(/policy/);
    for (const secret of secretsOf(m.h)) {
      for (const t of texts) expect(t).to.not.include(secret);
      expect(stderr).to.not.include(m.h.env.dbUrl);
    }
    // a stray line on stdout would have broken the JSON-RPC stream the calls above rode on
    expect(transport.pid).to.be.a('number');
  });

  it('stops when the agent closes its stdin', async () => {
    const pid = transport.pid!;
    const alive = (): boolean => { try { process.kill(pid, 0); return true; } catch { return false; } };
    expect(alive()).to.equal(true);
    // the transport's own close would also signal the process: end its stdin alone, as an agent host that quits does
    (transport as unknown as { _process: { stdin: { end(): void } } })._process.stdin.end();
    await waitFor(async () => !alive(), 15_000, 'tributary mcp to exit');
  });
});
