/**
 * JSON bodies nested past HTTP_MAX_JSON_DEPTH: refused with 400 in the error envelope before
 * any handler walks them (a 5,000-deep `input` of an x402 resource once answered 500, a stack
 * overflow in the NUL check). Brackets inside strings are text, not depth; bodies within the
 * limit pass, and a NUL deep inside one is still refused.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt } from './x402-facilitator-support.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { registerFacilitatorRoutes } from '../../commands/x402/facilitator/routes.js';
import { registerApiKeyRoutes } from '../../commands/api-keys/routes.js';
import { registerMcpRoutes } from '../../src/app/mcp/http.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';

/** JSON text of `depth` levels: objects around arrays around `inner` (depth 0: `inner` itself); text, as JSON.stringify itself overflows at thousands of levels */
const nested = (depth: number, inner = '1'): string =>
  depth === 0 ? inner : `{"a":${'['.repeat(depth - 1)}${inner}${']'.repeat(depth - 1)}}`;
const DEEP = 5000;
const deepObjects = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

async function raw(base: string, method: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: await res.json() };
}

function refusedForDepth(r: { status: number; body: any }, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.body).slice(0, 200)}`).to.equal(400);
  expect(r.body, what).to.include({ success: false, code: 'invalid_input' });
  expect(r.body.error, what).to.match(/nested/);
}

describe('JSON bodies nested too deep', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let payg: AcceptedRequirement;
  let key = '';
  let jwt = '';
  let gateway = '';

  before(async () => {
    h = await startX402('json-depth');
    [, payg] = (await h.accepts()) as [AcceptedRequirement, AcceptedRequirement];
    gateway = payg.gateway;
    const gw = h.ln.fixtures.gateways.find((g) => g.address === gateway)!;
    jwt = await gatewayJwt(h, gateway, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gateway}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
  });
  after(async () => { await h.close(); });

  /** a resource registration whose input is the JSON text `input` */
  const resource = (input: string, url = 'https://merchant.example/deep') =>
    `{"resource":${JSON.stringify(url)},"discoverable":true,"input":${input},"accepts":${JSON.stringify([payg])}}`;
  const put = (base: string, body: string) => raw(base, 'PUT', '/v1/x402/resources', body, { 'x-api-key': key });

  it('refuses an x402 resource whose input is nested 5,000 deep with 400, and registers nothing', async () => {
    refusedForDepth(await put(h.api.url, resource(nested(5000))), 'input 5,000 deep');
    refusedForDepth(await put(h.api.url, resource(deepObjects(5000))), 'objects 5,000 deep');
    const listed = await call(h.api.url, 'GET', '/v1/x402/discovery/resources');
    expect(listed.body.items.map((i: any) => i.resource)).to.not.include('https://merchant.example/deep');
  });

  it('refuses a whole body nested 5,000 deep on any JSON route, and one just past the default limit of 32', async () => {
    for (const [method, path, headers] of [
      ['PUT', '/v1/x402/resources', { 'x-api-key': key }],
      ['POST', `/v1/gateway/${gateway}/api-keys`, { authorization: `Bearer ${jwt}` }],
      ['POST', '/v1/x402/verify', { 'x-api-key': key }],
    ] as const) {
      refusedForDepth(await raw(h.api.url, method, path, '['.repeat(5000) + ']'.repeat(5000), headers), `${method} ${path} 5,000 deep`);
      refusedForDepth(await raw(h.api.url, method, path, `{"a":${nested(32)}}`, headers), `${method} ${path} 33 deep`);
    }
  });

  it('accepts a body at the limit, counts no brackets inside strings, and still refuses a NUL deep inside', async () => {
    const at = await put(h.api.url, resource(nested(31))); // the body and 31 levels: 32
    expect(at.status, JSON.stringify(at.body).slice(0, 200)).to.equal(200);
    const text = await put(h.api.url, resource(JSON.stringify({ note: '['.repeat(5000) + '{'.repeat(5000) }), 'https://merchant.example/text'));
    expect(text.status, JSON.stringify(text.body).slice(0, 200)).to.equal(200);
    const nul = await put(h.api.url, resource(nested(20, JSON.stringify({ x: 'a\u0000b' })), 'https://merchant.example/nul'));
    expect(nul.status).to.equal(400);
    expect(nul.body.error).to.match(/NUL/);
  });

  it('refuses an MCP JSON-RPC request nested 5,000 deep with 400, and answers one within the limit', async () => {
    const mcp = await startTestApi(h.env, { ...h.overrides, MCP_ENABLED: 'true' }, { modules: [registerMcpRoutes] });
    try {
      const headers = { accept: 'application/json, text/event-stream' };
      const rpc = (args: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":${args}}}`;
      refusedForDepth(await raw(mcp.url, 'POST', '/mcp', rpc(nested(DEEP)), headers), 'MCP arguments 5,000 deep');
      const within = await raw(mcp.url, 'POST', '/mcp', rpc(nested(10)), headers);
      expect(within.status, JSON.stringify(within.body).slice(0, 200)).to.be.below(500);
      expect(JSON.stringify(within.body)).to.not.match(/nested deeper/);
    } finally {
      await mcp.close();
    }
  });

  describe('HTTP_MAX_JSON_DEPTH', () => {
    let small: TestApi;
    before(async () => {
      small = await startTestApi(h.env, { ...h.overrides, HTTP_MAX_JSON_DEPTH: '8' }, { modules: [registerFacilitatorRoutes, registerApiKeyRoutes] });
    });
    after(async () => { await small.close(); });

    it('sets the limit', async () => {
      refusedForDepth(await put(small.url, resource(nested(8), 'https://merchant.example/small')), 'depth 9 over 8');
      const ok = await put(small.url, resource(nested(7), 'https://merchant.example/small'));
      expect(ok.status, JSON.stringify(ok.body).slice(0, 200)).to.equal(200);
    });
  });
});
