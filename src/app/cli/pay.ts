/**
 * `tributary pay <url> --wallet <secret|file> [--scheme deferred|x402://payg|x402://upto|x402://prepaid] [--rpc <url>]
 * [--token-cache <file>]`: fetches a payment-gated resource, paying when asked (402),
 * and prints what was paid and the answer. The wallet is a base58 secret key (64 bytes,
 * or a 32-byte seed), or the path of a file holding one, or a JSON array of bytes (the
 * Solana CLI's keypair file). The RPC defaults to SOLANA_RPC_URL (the localnet's when unset).
 */
import { existsSync, readFileSync } from 'node:fs';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import type { ExtraCommand } from './command.js';
import type { ParsedArgs } from './args.js';
import { loadConfigOrExit } from './process.js';
import { fileTokenStore, payAndFetch, PaymentFailed, type AcceptedRequirement, type Scheme } from '../../../commands/x402/client/pay.js';
import { SCHEMES } from '../../../commands/x402/requirements.js';

/** A keypair from base58 text, a JSON byte array, or a file holding either. */
export function parseWallet(value: string): Keypair {
  const text = existsSync(value) ? readFileSync(value, 'utf8').trim() : value.trim();
  let bytes: Uint8Array;
  try {
    bytes = text.startsWith('[') ? Uint8Array.from(JSON.parse(text) as number[]) : bs58.decode(text);
  } catch {
    throw new Error('--wallet is neither a base58 secret key, a JSON byte array, nor a file holding one');
  }
  if (bytes.length === 64) return Keypair.fromSecretKey(bytes);
  if (bytes.length === 32) return Keypair.fromSeed(bytes);
  throw new Error(`--wallet holds ${bytes.length} bytes; a secret key is 64 (or a 32-byte seed)`);
}

const one = (args: ParsedArgs, name: string): string | undefined => args.flags.get(name)?.at(-1);
const out = (s: string) => process.stdout.write(`${s}\n`);

/** How the amount paid is to be read, by scheme. */
function termsText(q: AcceptedRequirement): string {
  if (q.scheme === 'deferred') return ` ${q.paymentFrequency ?? ''}`;
  if (q.scheme === 'x402://prepaid') return ` up front, a credit drawn by ${q.pricePerRequest ?? '?'} per request`;
  if (q.scheme === 'x402://upto') return ' at most, settled after use';
  return ' per request';
}

export const payCommand: ExtraCommand = {
  usage: 'pay <url> --wallet <key>',
  summary: 'fetch a payment-gated URL, paying on 402 (--scheme deferred|x402://payg|x402://upto|x402://prepaid, --rpc <url>, --token-cache <file>)',
  async run(args) {
    const url = args.positionals[1];
    const walletArg = one(args, 'wallet');
    if (!url || !walletArg) throw new Error('usage: tributary pay <url> --wallet <base58 secret key or key file> [--scheme deferred|x402://payg|x402://upto|x402://prepaid] [--rpc <url>]');
    const scheme = one(args, 'scheme');
    if (scheme !== undefined && !(SCHEMES as readonly string[]).includes(scheme)) throw new Error(`--scheme must be one of ${SCHEMES.join(', ')}`);
    const wallet = parseWallet(walletArg);
    const rpcUrl = one(args, 'rpc') ?? loadConfigOrExit(process.env).solana.rpcUrl;
    const cache = one(args, 'token-cache');
    out(`wallet ${wallet.publicKey.toBase58()}, chain ${rpcUrl}`);
    try {
      const r = await payAndFetch(url, {
        wallet, rpcUrl, ...(scheme ? { scheme: scheme as Scheme } : {}), ...(cache ? { tokens: fileTokenStore(cache) } : {}),
        onPauseWait: (reason, waitedMs) => out(`the program is paused (emergency pause): ${reason}; waiting and trying again (${Math.round(waitedMs / 1000)} s so far, up to 30 s)`),
      });
      if (r.usedKeptToken) out('used the kept JWT; nothing paid');
      if (r.paid) {
        const q = r.paid.requirement;
        out(`paid: ${q.scheme} on ${q.network}: ${q.amount} ${q.currency} (smallest units)${termsText(q)} to ${q.recipient} via gateway ${q.gateway}`);
        out(`policy ${r.paid.policy ?? '?'}${r.paid.transaction ? `, transaction ${r.paid.transaction}` : ' (an existing policy; no transaction sent)'}`);
        out(r.paid.message);
      }
      const text = await r.response.text();
      out(`HTTP ${r.response.status}`);
      out(text);
      if (!r.response.ok) process.exitCode = 1;
    } catch (err) {
      if (!(err instanceof PaymentFailed)) throw err;
      out(err.message);
      process.exitCode = 1;
    }
  },
};
