/**
 * The x402 `exact` scheme end to end on the localnet answering as devnet, with the
 * ecosystem's own packages on both sides: @x402/core's client with @x402/svm's exact
 * client scheme builds and signs the payment (its RPC URL pointed at the localnet), and
 * @x402/core's facilitator with @x402/svm's exact facilitator scheme verifies it (a
 * simulation) and settles it (signs as fee payer, sends, confirms). The localnet's
 * balances are the oracle.
 */
import { createSolanaRpc, type Signature } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { expect } from 'chai';
import {
  DEVNET_NETWORK, DEVNET_PYUSD, DEVNET_USDC, FUNDED_BASE_UNITS, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet,
} from '../support/devnet.js';

describe('x402 exact on the localnet answering as devnet: @x402/svm pays, verifies and settles', function () {
  this.timeout(60_000);
  let net: DevnetLocalnet;
  let facilitator: x402Facilitator;
  let feePayer: DevnetWallet;
  let merchant: DevnetWallet;
  const quiet = console.error;

  before(async () => {
    net = await startDevnetLocalnet('devnet-x402');
    feePayer = net.fund('facilitator-fee-payer');
    merchant = net.fund('merchant');
    const scheme = new ExactSvmFacilitator(toFacilitatorSvmSigner(await feePayer.signer(), { defaultRpcUrl: net.rpcUrl }));
    facilitator = new x402Facilitator().register(DEVNET_NETWORK, scheme);
    // the facilitator scheme logs a failed send or simulation on stderr; the tests read its answers
    console.error = () => undefined;
  });
  after(async () => {
    console.error = quiet;
    await net.close();
  });

  const required = (asset: string, amount: bigint): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'https://merchant.test/report', description: 'a report', mimeType: 'application/json' },
    accepts: [{
      scheme: 'exact', network: DEVNET_NETWORK, asset, amount: amount.toString(), payTo: merchant.address, maxTimeoutSeconds: 60,
      extra: { feePayer: feePayer.address },
    }],
  });

  /** `uncapped`: without the client's default cap of $1 a payment */
  async function pay(payer: DevnetWallet, asset: string, amount: bigint, uncapped = false) {
    const scheme = new ExactSvmClient(await payer.signer(), { rpcUrl: net.rpcUrl });
    const client = uncapped
      ? x402Client.fromConfig({ schemes: [{ network: DEVNET_NETWORK, client: scheme }], spendControls: false })
      : new x402Client().register(DEVNET_NETWORK, scheme);
    const req = required(asset, amount);
    const payload = await client.createPaymentPayload(req);
    return { payload, requirements: req.accepts[0] as PaymentRequirements };
  }

  for (const [name, asset] of [['devnet USDC (SPL Token)', DEVNET_USDC], ['devnet PYUSD (Token-2022)', DEVNET_PYUSD]] as const) {
    it(`verifies and settles a payment in ${name}: the amount moves once, the fee payer pays the fee`, async () => {
      const payer = net.fund(`payer-${asset}`);
      const amount = 250_000n;
      const start = { payer: net.tokenBalance(payer.address, asset), merchant: net.tokenBalance(merchant.address, asset), fee: net.lamports(feePayer.address), sol: net.lamports(payer.address) };
      const { payload, requirements } = await pay(payer, asset, amount);
      expect(payload.accepted).to.deep.include({ network: DEVNET_NETWORK, asset, payTo: merchant.address });

      const verified = await facilitator.verify(payload, requirements);
      expect(verified).to.deep.include({ isValid: true, payer: payer.address });
      expect(net.tokenBalance(payer.address, asset), 'verify moves nothing').to.equal(start.payer);

      const settled = await facilitator.settle(payload, requirements);
      expect(settled).to.deep.include({ success: true, network: DEVNET_NETWORK, payer: payer.address });
      expect(net.tokenBalance(payer.address, asset)).to.equal(start.payer - amount);
      expect(net.tokenBalance(merchant.address, asset)).to.equal(start.merchant + amount);
      expect(net.lamports(payer.address), 'the payer pays no SOL').to.equal(start.sol);
      // two signatures, and the exact client's budget: 20,000 units at 1 micro-lamport, rounded up to 1 lamport
      expect(net.lamports(feePayer.address)).to.equal(start.fee - 10_001);
      const tx = await createSolanaRpc(net.rpcUrl).getTransaction(settled.transaction as Signature, { maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
      expect(Number(tx?.meta?.fee)).to.equal(10_001);
      expect(tx?.meta?.err).to.equal(null);

      const again = await facilitator.settle(payload, requirements);
      expect(again.success).to.equal(false);
      expect(net.tokenBalance(merchant.address, asset), 'a second settle moves nothing').to.equal(start.merchant + amount);
    });
  }

  it('refuses at verify a payment the payer cannot cover: the localnet\'s simulation fails it', async () => {
    const payer = net.fund('payer-short');
    const { payload, requirements } = await pay(payer, DEVNET_USDC, FUNDED_BASE_UNITS + 1n, true);
    const verified = await facilitator.verify(payload, requirements);
    expect(verified).to.deep.include({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
    // the token program's InsufficientFunds (0x1) on the transfer, instruction 2 (kit's numbers come back as strings)
    expect(verified.invalidMessage).to.match(/"InstructionError":\["?2"?,\{"Custom":"?1"?\}\]/);
    const settled = await facilitator.settle(payload, requirements);
    expect(settled.success).to.equal(false);
    expect(net.tokenBalance(payer.address, DEVNET_USDC)).to.equal(FUNDED_BASE_UNITS);
  });
});
