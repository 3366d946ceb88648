/**
 * `tributary sign <text> --wallet <key>`: the wallet's ed25519 signature of the text's
 * UTF-8 bytes, in base58: what POST /v1/tokens/issue takes for the nonce of
 * POST /v1/tokens/challenge, and gateway sign-in for its nonce. The wallet is given as
 * `tributary pay` takes it.
 *
 * It signs challenges only (`<purpose>|<service>|<subject>|<random>`, src/kernel/auth/
 * signed-messages.ts), and says on stderr what it signs: a command that signed any text
 * could be talked into signing another flow's message (a payment proof, another service's
 * sign-in) by whoever supplies the text.
 */
import bs58 from 'bs58';
import type { ExtraCommand } from './command.js';
import { parseWallet } from './pay.js';
import { signDetached } from '../../../infra/crypto/ed25519.js';
import { parseChallenge } from '../../kernel/auth/signed-messages.js';

export const signCommand: ExtraCommand = {
  usage: 'sign <challenge> --wallet <key>',
  summary: 'the wallet\'s base58 ed25519 signature of a tokens or sign-in challenge (nothing else)',
  async run(args) {
    const text = args.positionals[1];
    const walletArg = args.flags.get('wallet')?.at(-1);
    if (text === undefined || !walletArg) throw new Error('usage: tributary sign <challenge> --wallet <base58 secret key or key file>');
    const challenge = parseChallenge(text);
    if (!challenge) {
      throw new Error('not signing: the text is not a challenge of POST /v1/tokens/challenge or of gateway sign-in (<purpose>|<service>|<subject>|<random>)');
    }
    const wallet = parseWallet(walletArg);
    process.stderr.write(`signing ${challenge.purpose} for ${challenge.subject} at ${challenge.service}\n`);
    process.stdout.write(`${bs58.encode(signDetached(new TextEncoder().encode(text), wallet.secretKey))}\n`);
    return Promise.resolve();
  },
};
