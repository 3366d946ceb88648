/**
 * `tributary sign <text> --wallet <key>`: the wallet's ed25519 signature of the text's
 * UTF-8 bytes, in base58: what POST /v1/tokens/issue takes for the nonce of
 * POST /v1/tokens/challenge, and gateway sign-in for its nonce. The wallet is given as
 * `tributary pay` takes it.
 */
import bs58 from 'bs58';
import type { ExtraCommand } from './command.js';
import { parseWallet } from './pay.js';
import { signDetached } from '../../../infra/crypto/ed25519.js';

export const signCommand: ExtraCommand = {
  usage: 'sign <text> --wallet <key>',
  summary: 'the wallet\'s base58 ed25519 signature of the text (a tokens or sign-in nonce)',
  async run(args) {
    const text = args.positionals[1];
    const walletArg = args.flags.get('wallet')?.at(-1);
    if (text === undefined || !walletArg) throw new Error('usage: tributary sign <text> --wallet <base58 secret key or key file>');
    const wallet = parseWallet(walletArg);
    process.stdout.write(`${bs58.encode(signDetached(new TextEncoder().encode(text), wallet.secretKey))}\n`);
    return Promise.resolve();
  },
};
