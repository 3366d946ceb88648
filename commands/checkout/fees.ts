/**
 * What a payer pays and what the merchant receives, as the program computes it
 * (PROGRAM.md §2, shared/fees.rs): total_fee = floor(A × gateway_fee_bps / 10000); the
 * protocol's cut is floor(total_fee × share / 10000), the share being the gateway's custom
 * one when its flag bit2 is set, else the config's protocol_share_bps. Gross mode (bit1
 * clear) takes the fee out of A; net mode adds it on top of what the payer pays.
 */
import { readProgramAccount } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { chainRead } from '../x402/settle.js';
import type { PaymentRequirement } from '../x402/requirements.js';

const FLAG_NET_AMOUNT = 0x02;
const FLAG_CUSTOM_PROTOCOL_SHARE = 0x04;

export interface FeeTerms {
  gatewayFeeBps: number;
  /** the protocol's share of the gateway's fee, in basis points of that fee */
  protocolShareBps: number;
  /** net mode: the fee is paid on top of the amount */
  netMode: boolean;
  /** the program's emergency pause: no payment goes through while it holds */
  programPaused: boolean;
}

export interface FeeSplit { gatewayFee: bigint; protocolFee: bigint; recipientReceives: bigint; payerPays: bigint }

const bps = (x: bigint, b: number): bigint => (x * BigInt(b)) / 10_000n;

export function splitFees(amount: bigint, t: FeeTerms): FeeSplit {
  const total = bps(amount, t.gatewayFeeBps);
  return {
    gatewayFee: total,
    protocolFee: bps(total, t.protocolShareBps),
    recipientReceives: t.netMode ? amount : amount - total,
    payerPays: t.netMode ? amount + total : amount,
  };
}

export interface FeeReadDeps { rpc: RpcClient; programId: string; commitment: Commitment; configAddress: string }

/** The gateway's and the program's fee settings now; undefined when the gateway is no payment gateway on this chain. */
export async function readFeeTerms(deps: FeeReadDeps, r: PaymentRequirement): Promise<FeeTerms | undefined> {
  const opts = { programId: deps.programId, commitment: deps.commitment };
  const [gateway, config] = await Promise.all([
    chainRead('getAccountInfo', () => readProgramAccount(deps.rpc, r.gateway, 'PaymentGateway', opts)),
    chainRead('getAccountInfo', () => readProgramAccount(deps.rpc, deps.configAddress, 'ProgramConfig', opts)),
  ]);
  if (gateway.kind !== 'found' || config.kind !== 'found') return undefined;
  const flags = Number(gateway.data['feature_flags'] ?? 0);
  const custom = (flags & FLAG_CUSTOM_PROTOCOL_SHARE) !== 0;
  return {
    gatewayFeeBps: Number(gateway.data['gateway_fee_bps'] ?? 0),
    protocolShareBps: Number(custom ? gateway.data['custom_protocol_share_bps'] : config.data['protocol_share_bps']),
    netMode: (flags & FLAG_NET_AMOUNT) !== 0,
    programPaused: config.data['emergency_pause'] === true,
  };
}
