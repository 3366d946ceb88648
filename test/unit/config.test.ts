import { expect } from 'chai';
import { ConfigError, loadConfig, NETWORKS, onLocalnet, USDC_DEVNET, USDC_MAINNET } from '../../src/kernel/config/config.js';
import { demoSetup } from '../../commands/x402/demo.js';

describe('configuration', () => {
  it('has working defaults and is frozen', () => {
    const c = loadConfig({});
    expect(c.http.port).to.equal(3002);
    expect(c.solana.useLocalnet).to.equal(true);
    expect(c.solana.network).to.equal(NETWORKS.localnet);
    expect(c.solana.defaultStablecoin).to.equal(USDC_DEVNET);
    expect(Object.isFrozen(c.http)).to.equal(true);
  });

  it('selects the mainnet network and USDC when a cluster URL is given', () => {
    const c = loadConfig({ SOLANA_RPC_URL: 'https://rpc.example:8899' });
    expect(c.solana.cluster).to.equal('mainnet');
    expect(c.solana.defaultStablecoin).to.equal(USDC_MAINNET);
    expect(c.solana.wsUrl).to.equal('wss://rpc.example:8900');
  });

  it('runs the built-in localnet as devnet with SOLANA_CLUSTER=devnet and no SOLANA_RPC_URL: devnet\'s network id and USDC', () => {
    const c = loadConfig({ SOLANA_CLUSTER: 'devnet' });
    expect(c.solana.useLocalnet).to.equal(true);
    expect(c.solana.network).to.equal('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1');
    expect(c.solana.defaultStablecoin).to.equal('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
    expect(c.solana.rpcUrl).to.equal(`http://127.0.0.1:${c.localnet.port}`);
  });

  it('keeps the localnet conveniences (fixtures, demo gateway, private webhook targets) on the built-in localnet as devnet, and only there', () => {
    const builtIn = loadConfig({ SOLANA_CLUSTER: 'devnet' });
    expect(onLocalnet(builtIn.solana)).to.equal(true);
    expect(builtIn.webhooks.allowPrivateTargets).to.equal(true);
    expect(demoSetup(builtIn).on).to.equal(true);
    const real = loadConfig({ SOLANA_CLUSTER: 'devnet', SOLANA_RPC_URL: 'https://rpc.example:8899' });
    expect(onLocalnet(real.solana)).to.equal(false);
    expect(real.webhooks.allowPrivateTargets).to.equal(false);
    expect(demoSetup(real).on).to.equal(false);
  });

  it('names every bad variable and what it expects', () => {
    try {
      loadConfig({ PORT: 'eighty', SOLANA_CLUSTER: 'moon', REDIS_URL: 'http://x', SIGNING_KEY_ENCRYPTION_KEY: 'short' });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const msg = (err as Error).message;
      expect(msg).to.contain('PORT: expected an integer');
      expect(msg).to.contain('SOLANA_CLUSTER: expected one of mainnet, devnet, localnet');
      expect(msg).to.contain('REDIS_URL: expected a URL with scheme redis: or rediss:');
      expect(msg).to.contain('SIGNING_KEY_ENCRYPTION_KEY: expected 32 bytes');
      expect(msg).not.to.contain('short');
    }
  });
});
