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

  describe('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS', () => {
    const current = 'ab'.repeat(32);
    const hexKey = 'cd'.repeat(32);
    const b64Key = Buffer.alloc(32, 0xef).toString('base64');
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return (err as Error).message;
      }
      return expect.fail('should throw');
    };

    it('carries each earlier key, hex or base64, with the current one, which seals', () => {
      const c = loadConfig({ SIGNING_KEY_ENCRYPTION_KEY: current, SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: ` ${hexKey}, ${b64Key} ` });
      expect(c.keys.encryptionKey?.toString('hex')).to.equal(current);
      expect(c.keys.encryptionKey?.previous?.map((k) => k.toString('hex'))).to.deep.equal([hexKey, 'ef'.repeat(32)]);
      expect(loadConfig({ SIGNING_KEY_ENCRYPTION_KEY: current }).keys.encryptionKey?.previous).to.deep.equal([]);
    });

    it('names the position of a bad entry, never its value', () => {
      const msg = problems({ SIGNING_KEY_ENCRYPTION_KEY: current, SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: `${hexKey},not-a-key-at-all,${'12'.repeat(31)}` });
      expect(msg).to.contain('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: expected 32 bytes as 64 hex characters or base64 in entry 2 of 3');
      expect(msg).to.contain('in entry 3 of 3');
      expect(msg).not.to.contain('entry 1 of 3');
      for (const value of ['not-a-key-at-all', '12'.repeat(31), hexKey]) expect(msg).not.to.contain(value);
    });

    it('refuses previous keys without a current key, and the current key listed as a previous one', () => {
      const alone = problems({ SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: hexKey });
      expect(alone).to.contain('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: set without SIGNING_KEY_ENCRYPTION_KEY');
      expect(alone).not.to.contain(hexKey);
      const itself = problems({ SIGNING_KEY_ENCRYPTION_KEY: current, SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: `${hexKey},${current}` });
      expect(itself).to.contain('SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS: entry 2 of 2 is SIGNING_KEY_ENCRYPTION_KEY itself');
      expect(itself).not.to.contain(current);
    });
  });
});
