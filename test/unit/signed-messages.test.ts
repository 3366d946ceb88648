/** The texts wallets sign: each names its purpose, service and subject, and nothing else parses as one. */
import { expect } from 'chai';
import { challengeProblem, challengeText, parseChallenge, serviceName, SIGN_PURPOSES } from '../../src/kernel/auth/signed-messages.js';

describe('signed messages', () => {
  const signIn = { purpose: SIGN_PURPOSES.gatewaySignIn, service: 'pay.example.com', subject: 'Gw1111111111111111111111111111111' } as const;

  it('names the service by PUBLIC_BASE_URL\'s host, else the audience', () => {
    expect(serviceName('https://pay.example.com/base/', 'tributary-api')).to.equal('pay.example.com');
    expect(serviceName('http://localhost:3002', 'tributary-api')).to.equal('localhost:3002');
    expect(serviceName(undefined, 'tributary-api')).to.equal('tributary-api');
    expect(serviceName('not a url', 'tributary-api')).to.equal('tributary-api');
  });

  it('reads back what it wrote, with a fresh random part each time', () => {
    const a = challengeText(signIn);
    expect(parseChallenge(a)).to.deep.equal(signIn);
    expect(challengeProblem(a, signIn)).to.equal(undefined);
    expect(challengeText(signIn)).to.not.equal(a);
  });

  it('refuses another purpose, service or subject by name, and texts that are no challenge', () => {
    const token = challengeText({ ...signIn, purpose: SIGN_PURPOSES.walletToken });
    expect(challengeProblem(token, signIn)).to.match(/not a tributary-gateway-sign-in challenge/);
    expect(challengeProblem(challengeText({ ...signIn, service: 'staging.example.com' }), signIn)).to.match(/service staging\.example\.com, not pay\.example\.com/);
    expect(challengeProblem(challengeText({ ...signIn, subject: 'Other' }), signIn)).to.match(/issued for Other/);
    for (const text of ['tributary-x402|id|https://pay.example.com/r|-|1795000000', 'DbFM391JrtfAugtCXWnf7iVmdjGigN1ub3KMM', 'tributary-token:abc', `${challengeText(signIn)}|extra`, 'x'.repeat(500)]) {
      expect(parseChallenge(text), text.slice(0, 40)).to.equal(undefined);
    }
  });
});
