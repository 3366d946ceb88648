/**
 * The parts of a Payment transaction outside the Tributary program, checked without the
 * chain: associated token account creation (the payer's own account, and for `deferred`
 * and `x402://prepaid` the fee recipients' accounts, as the SDK creates them when missing), and the SPL
 * revoke + approve that make the policy executable.
 */
import { PublicKey } from '@solana/web3.js';
import { associatedTokenAddress, decodeAtaIx, decodeTokenIx } from '../../src/kernel/domain/spl-token.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import type { PaymentRequirement } from './requirements.js';

export interface Ix { index: number; program: string; accounts: string[]; data: Uint8Array }

const legacyCache = createLru<string, string>(16);

/** The legacy delegate PDA ["payments"]: the program still honors an approve to it. */
export function paymentsDelegate(programId: string): string {
  let hit = legacyCache.get(programId);
  if (!hit) {
    hit = PublicKey.findProgramAddressSync([Buffer.from('payments')], new PublicKey(programId))[0].toBase58();
    legacyCache.set(programId, hit);
  }
  return hit;
}

/** At most the payer's account and three fee accounts (recipient, gateway fee, protocol fee). */
export const MAX_ATA_CREATIONS = 4;

/** An ATA creation: funded by the payer, for the requirement's mint, at the derived address. */
export function checkAtaIx(ix: Ix, payer: string, r: PaymentRequirement, executes: boolean): string | undefined {
  const d = decodeAtaIx(ix.data, ix.accounts);
  if (d.kind === 'other') return `instruction ${ix.index} is not an associated token account creation`;
  if (d.funder !== payer) return `instruction ${ix.index} creates a token account funded by ${d.funder}, not the payer`;
  if (d.mint !== r.tokenMint) return `instruction ${ix.index} creates a token account of mint ${d.mint}; the requirement's mint is ${r.tokenMint}`;
  if (d.ata !== associatedTokenAddress(d.wallet, d.mint)) return `instruction ${ix.index} creates ${d.ata}, which is not the associated token account of ${d.wallet}`;
  if (d.wallet !== payer && !executes) {
    return `instruction ${ix.index} creates a token account of ${d.wallet}; an ${r.scheme} payment executes nothing, so it creates only the payer's`;
  }
  return undefined;
}

export interface ApproveCheck { delegate: string; amount: bigint }

/**
 * The token instructions: at most one revoke, then exactly one approve, both on the
 * payer's token account of the mint and signed by the payer. The approve names the user
 * payment PDA (or the legacy payments PDA) for at least the new policy's yearly allowance.
 */
export function checkTokenIxs(
  ixs: readonly Ix[], payer: string, r: PaymentRequirement, userPayment: string, programId: string, allowance: { amount: bigint; formula: string },
): { ok: true; approve: ApproveCheck; approveIndex: number } | { ok: false; reason: string } {
  const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });
  const source = associatedTokenAddress(payer, r.tokenMint);
  let approve: (ApproveCheck & { index: number }) | undefined;
  let revoked = false;
  for (const ix of ixs) {
    const d = decodeTokenIx(ix.data, ix.accounts);
    if (d.kind === 'other') return fail(`instruction ${ix.index} is a token program instruction (tag ${d.tag ?? 'none'}) other than approve or revoke; a payment moves tokens only through execute_payment`);
    if (d.source !== source) return fail(`instruction ${ix.index} (${d.kind}) acts on ${d.source}; the payer's token account of the mint is ${source}`);
    if (d.owner !== payer) return fail(`instruction ${ix.index} (${d.kind}) is authorized by ${d.owner}, not the payer`);
    if (d.kind === 'revoke') {
      if (revoked || approve) return fail('a payment revokes at most once, before its approve');
      revoked = true;
      continue;
    }
    if (approve) return fail('a payment carries exactly one approve');
    approve = { index: ix.index, delegate: d.delegate, amount: d.amount };
  }
  if (!approve) return fail(`the transaction has no SPL approve of the program's delegate (the user payment account ${userPayment}); without it no payment of the policy can execute`);
  if (approve.delegate !== userPayment && approve.delegate !== paymentsDelegate(programId)) {
    return fail(`the approve's delegate is ${approve.delegate}; the program accepts the user payment account ${userPayment} (or the legacy payments account ${paymentsDelegate(programId)})`);
  }
  if (approve.amount < allowance.amount) {
    return fail(`the approve's amount ${approve.amount} is below ${allowance.amount}, the policy's allowance for a year (${allowance.formula})`);
  }
  return { ok: true, approve: { delegate: approve.delegate, amount: approve.amount }, approveIndex: approve.index };
}
