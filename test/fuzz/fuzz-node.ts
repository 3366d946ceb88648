/**
 * What the fuzz files share: an API node running every route module against stand-ins
 * (the localnet as the chain, Jupiter and the three pool venues), its routes read from its
 * own OpenAPI document, a signed-in fixture gateway, and the verdict on one answer.
 */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { parse } from 'yaml';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { startVenueStandIns, type VenueStandIns } from '../support/upstreams/venues.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { ROUTE_MODULES } from '../../src/app/route-modules.js';
import type { Schema } from './hostile.js';
import { closeAgent, send, type RawResponse } from './raw-http.js';

export const ADMIN = 'fuzz-admin-key';
const LOTS = '1000000';

export interface Param { name: string; in: 'path' | 'query'; schema: Schema; required?: boolean }
export interface Op { method: string; path: string; params: Param[]; body?: Schema; statuses: Set<string> }

export function operations(doc: { paths: Record<string, Record<string, Record<string, unknown>>> }): Op[] {
  const ops: Op[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = (op['requestBody'] as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      ops.push({
        method: method.toUpperCase(), path,
        params: (op['parameters'] ?? []) as Param[],
        ...(content?.['application/json'] ? { body: content['application/json'].schema } : {}),
        statuses: new Set(Object.keys(op['responses'] as object)),
      });
    }
  }
  return ops;
}

/** A verdict on one answer; undefined when it is acceptable. */
export function fault(op: Op, res: RawResponse): string | undefined {
  if (res.status >= 500 && !(res.status === 503 && op.statuses.has('503'))) return `status ${res.status}`;
  if (res.status < 400) return undefined;
  const e = res.json as Record<string, unknown> | undefined;
  if (!e || typeof e['error'] !== 'string' || e['success'] !== false || typeof e['timestamp'] !== 'number') return `status ${res.status} without the error envelope: ${res.text.slice(0, 200)}`;
  return undefined;
}

export interface FuzzNode {
  env: TestEnv;
  net: Localnet;
  api: TestApi;
  ops: Op[];
  gateway: { address: string; authority: string };
  gatewayJwt: string;
  close(): Promise<void>;
}

/** `tag`: the test database and key prefix, and the localnet's seed. */
export async function startFuzzNode(tag: string): Promise<FuzzNode> {
  const env = await createTestEnv(tag);
  const [net, jup, venues]: [Localnet, JupiterStandIn, VenueStandIns] = await Promise.all([startLocalnet({ port: 0, seed: tag, rate: 0 }), startJupiterStandIn(), startVenueStandIns()]);
  const api = await startTestApi(env, {
    SOLANA_RPC_URL: net.rpcUrl, SOLANA_WS_URL: net.wsUrl, SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: tag, SOLANA_RPC_TIMEOUT_MS: '2000',
    TOKENS_API_URL: jup.url, ...venues.env, UPSTREAM_TIMEOUT_MS: '2000', POOL_SYNC_INTERVAL_MS: '0',
    ADMIN_API_KEY: ADMIN, X402_CONFIRM_TIMEOUT_MS: '2000',
    RATE_LIMIT_PER_MINUTE: LOTS, RATE_LIMIT_CATALOG_PER_MINUTE: LOTS, RATE_LIMIT_TOKENS_ISSUE_PER_MINUTE: LOTS, RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: LOTS,
  }, { modules: ROUTE_MODULES });
  const doc = parse((await send(api.url, { method: 'GET', path: '/openapi.yaml' })).text) as Parameters<typeof operations>[0];
  const gateway = net.fixtures.gateways[0]!;
  return {
    env, net, api, ops: operations(doc), gateway, gatewayJwt: await signIn(api, gateway),
    async close() {
      closeAgent();
      await api.close();
      await Promise.all([net.close(), jup.close(), venues.close()]);
      await env.close();
    },
  };
}

async function signIn(api: TestApi, g: { address: string; authority: string; authoritySecretKey: string }): Promise<string> {
  const ch = await send(api.url, { method: 'POST', path: `/v1/gateway/${g.address}/auth/challenge` });
  const { nonce } = ch.json as { nonce: string };
  const signature = await ed.signAsync(new TextEncoder().encode(nonce), bs58.decode(g.authoritySecretKey).subarray(0, 32));
  const res = await send(api.url, {
    method: 'POST', path: `/v1/gateway/${g.address}/auth/verify`, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ signer: g.authority, signature: Array.from(signature), nonce }),
  });
  expect(res.status, res.text).to.equal(200);
  return (res.json as { token: string }).token;
}
