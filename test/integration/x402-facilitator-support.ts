/** What the facilitator tests share: a gateway JWT for a localnet fixture gateway, and JSON calls. */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import type { X402Harness } from './x402-harness.js';

export async function gatewayJwt(h: X402Harness, gateway: string, signer: string): Promise<string> {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  return (await h.api.node.keyRing.sign({ role: 'gateway', signer }, { subject: gateway, expiresAt: exp })).token;
}

export interface Answer { status: number; body: any }

export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The Payment header's JSON, as a facilitator request carries it. */
export const payloadOf = (header: string): any => JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
