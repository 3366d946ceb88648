/**
 * A merchant protects its own MCP tool with paidTool (commands/x402/mcp/paid-tool.ts) and
 * the service's payment engine: an x402://prepaid credit and an x402://payg policy, paid
 * by an agent through @x402/core's x402Client with Tributary's client schemes, each call
 * admitted by its scheme (a prepaid price drawn from the credit, a pay-as-you-go chunk
 * metered), a metered call whose handler fails answers isError with the receipt and is not
 * charged, and a payment made for another tool (its proof names another resource) is
 * refused with nothing sent. The agent signs each call: a payment's proof is answered once,
 * so a later call re-presents the payment with a fresh proof, and the same payload sent again
 * (a copy from an MCP host's transcript) is refused and meters nothing. The SDK's Client talks
 * to the merchant's McpServer over the SDK's in-memory transport pair.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tool answers are inspected field by field */
import { expect } from 'chai';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createPaymentEngine } from '../../commands/x402/engine.js';
import { paidTool } from '../../commands/x402/mcp/paid-tool.js';
import { agentPayload, requiredOf, resignedPayload, SIGNATURE, startMcp, textOf, type McpHarness } from './mcp-support.js';
import { requirementsOf } from './x402-plugins-support.js';

describe('a merchant\'s own MCP tools sold with paidTool: prepaid and pay-as-you-go, each call charged by its scheme', function () {
  this.timeout(90_000);
  let m: McpHarness;
  let client: Client;
  let failNext = false;

  const call = async (name: string, args: Record<string, unknown>, payment?: unknown): Promise<CallToolResult> =>
    await client.callTool({ name, arguments: args, ...(payment !== undefined ? { _meta: { 'x402/payment': payment } } : {}) }) as CallToolResult;

  before(async () => {
    m = await startMcp('mcp-merchant');
    const engine = createPaymentEngine({ ...m.h.api.node.x402, cacheMs: 0 });
    const reqs = requirementsOf(m.h);
    const server = new McpServer({ name: 'merchant', version: '1.0.0' });
    const input = { ticker: z.string().min(1).max(8).describe('the ticker to analyse') };
    paidTool(server, 'analysis_prepaid', { description: 'an analysis drawn from a prepaid credit', inputSchema: input }, [reqs.prepaid], engine,
      async (args, paid) => ({ content: [{ type: 'text', text: `analysis of ${args.ticker}` }], structuredContent: { ticker: args.ticker, prepaid: paid.grant.prepaid } }));
    paidTool(server, 'analysis_payg', { description: 'an analysis metered per call', inputSchema: input }, [reqs.payg], engine,
      async (args, paid) => {
        if (failNext) throw new Error('postgres://user:secret@db.internal/merchant is down');
        return { content: [{ type: 'text', text: `analysis of ${args.ticker}` }], structuredContent: { ticker: args.ticker, metered: paid.grant.metered } };
      });
    paidTool(server, 'quote_small_credit', { description: 'a quote from a credit of two calls' }, [{ ...reqs.prepaid, amount: 2000, pricePerRequest: 1000 }], engine,
      async (paid) => ({ content: [{ type: 'text', text: 'a quote' }], structuredContent: { prepaid: paid.grant.prepaid } }));
    // the same terms (and so the same requirement id) at another resource
    paidTool(server, 'analysis_payg_deep', { description: 'a deeper analysis metered per call', inputSchema: input }, [reqs.payg], engine,
      async (args) => ({ content: [{ type: 'text', text: `deep analysis of ${args.ticker}` }] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(clientSide);
  });
  after(async () => {
    await client?.close();
    await m?.close();
  });

  it('prepaid: one transaction buys the credit; each call draws its price', async () => {
    const payer = m.h.payer();
    const unpaid = await call('analysis_prepaid', { ticker: 'SOL' });
    expect(unpaid.isError).to.equal(true);
    expect(requiredOf(unpaid).resource.url).to.equal('mcp://tool/analysis_prepaid');
    const payment = await agentPayload(m.h, payer, requiredOf(unpaid));
    const landed = m.h.txCount();
    const first = await call('analysis_prepaid', { ticker: 'SOL' }, payment);
    expect(first.isError, textOf(first)).to.not.equal(true);
    expect((first._meta as any)['x402/payment-response'].transaction).to.match(SIGNATURE);
    expect((first.structuredContent as any).prepaid).to.include({ chunk: '1000', used: '1000', credit: '500000' });
    const second = await call('analysis_prepaid', { ticker: 'SOL' }, resignedPayload(payer, payment));
    expect((second.structuredContent as any).prepaid).to.include({ used: '2000', remaining: '498000' });
    expect(m.h.txCount(), 'the credit was bought once').to.equal(landed + 1);
  });

  it('a spent credit refuses the call with the reason and the receipt of what was paid; nothing more is sent', async () => {
    const payer = m.h.payer();
    const payment = await agentPayload(m.h, payer, requiredOf(await call('quote_small_credit', {})));
    for (const used of ['1000', '2000']) {
      const r = await call('quote_small_credit', {}, resignedPayload(payer, payment));
      expect((r.structuredContent as any).prepaid, textOf(r)).to.include({ used });
    }
    const landed = m.h.txCount();
    const spent = await call('quote_small_credit', {}, resignedPayload(payer, payment));
    expect(spent.isError).to.equal(true);
    expect(requiredOf(spent).error).to.match(/credit/);
    expect((spent._meta as any)['x402/payment-response']).to.include({ success: true });
    expect(m.h.txCount()).to.equal(landed);
  });

  it('payg: the policy is created once, every call is metered at the requirement\'s price; a failing handler answers isError with the receipt and is not charged', async () => {
    const payer = m.h.payer();
    const payment = await agentPayload(m.h, payer, requiredOf(await call('analysis_payg', { ticker: 'SOL' })));
    const first = await call('analysis_payg', { ticker: 'SOL' }, payment);
    expect(first.isError, textOf(first)).to.not.equal(true);
    expect((first.structuredContent as any).metered).to.include({ chunk: '10000', periodTotal: '10000' });
    failNext = true;
    const failed = await call('analysis_payg', { ticker: 'SOL' }, resignedPayload(payer, payment));
    failNext = false;
    expect(failed.isError).to.equal(true);
    expect(textOf(failed)).to.match(/failed after the payment settled/).and.not.match(/postgres|secret/);
    expect((failed._meta as any)['x402/payment-response']).to.include({ success: true });
    const second = await call('analysis_payg', { ticker: 'ETH' }, resignedPayload(payer, payment));
    expect((second.structuredContent as any).metered, 'the failed call\'s chunk was dropped').to.include({ periodTotal: '20000' });
  });

  it('the same payload sent again (a copy) is refused and meters nothing: the period total is unchanged', async () => {
    const payer = m.h.payer();
    const payment = await agentPayload(m.h, payer, requiredOf(await call('analysis_payg', { ticker: 'SOL' })));
    const first = await call('analysis_payg', { ticker: 'SOL' }, payment);
    expect((first.structuredContent as any).metered, textOf(first)).to.include({ periodTotal: '10000' });
    const landed = m.h.txCount();
    const copy = await call('analysis_payg', { ticker: 'SOL' }, payment);
    expect(copy.isError, textOf(copy)).to.equal(true);
    expect(requiredOf(copy).error).to.match(/payment proof .* was used already/);
    expect(copy._meta?.['x402/payment-response'], 'no receipt for a copy').to.equal(undefined);
    const own = await call('analysis_payg', { ticker: 'ETH' }, resignedPayload(payer, payment));
    expect((own.structuredContent as any).metered, 'the copy metered nothing').to.include({ chunk: '10000', periodTotal: '20000' });
    expect(m.h.txCount(), 'nothing sent for the copy or the payer\'s next call').to.equal(landed);
  });

  it('a payment made for one tool is refused by another: other terms, or the same terms at another resource (the proof names it); bad input never reaches payment', async () => {
    const payer = m.h.payer();
    const forPayg = await agentPayload(m.h, payer, requiredOf(await call('analysis_payg', { ticker: 'SOL' })));
    const landed = m.h.txCount();
    const wrongTool = await call('analysis_prepaid', { ticker: 'SOL' }, forPayg);
    expect(wrongTool.isError).to.equal(true);
    expect(requiredOf(wrongTool).error).to.match(/does not accept/);
    const sameTerms = await call('analysis_payg_deep', { ticker: 'SOL' }, forPayg);
    expect(sameTerms.isError).to.equal(true);
    expect(requiredOf(sameTerms).error).to.match(/proof/i);
    const badInput = await call('analysis_payg', { ticker: '' }, forPayg);
    expect(badInput.isError).to.equal(true);
    expect(textOf(badInput)).to.match(/ticker/);
    expect(m.h.txCount()).to.equal(landed);
  });
});
