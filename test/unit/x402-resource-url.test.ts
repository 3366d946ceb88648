/** The URL of an x402 resource: what is refused, and the one spelling kept of what is accepted. */
import { expect } from 'chai';
import { isLoopbackHost, normalizeResourceUrl } from '../../commands/x402/facilitator/resource-url.js';
import { AppError } from '../../src/kernel/http/errors.js';

const dev = { allowHttpLoopback: true, ownOrigins: ['https://pay.example'] };
const prod = { allowHttpLoopback: false, ownOrigins: ['https://pay.example'] };

const refusal = (raw: string, policy = dev): string => {
  try {
    normalizeResourceUrl(raw, policy);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(400);
    return (err as AppError).message;
  }
  return expect.fail(`${raw} was accepted`);
};

describe('x402 resource URLs', () => {
  it('keeps one spelling: lower-case scheme and host, punycode, no default port, no empty query, no trailing dot, upper-case escapes', () => {
    for (const [raw, want] of [
      ['HTTPS://API.EXAMPLE/report', 'https://api.example/report'],
      ['https://api.example/report?', 'https://api.example/report'],
      ['https://api.example:443/a/./b/../report', 'https://api.example/a/report'],
      ['https://api.example./report', 'https://api.example/report'],
      ['https://bücher.example/ä?q=%7e', 'https://xn--bcher-kva.example/%C3%A4?q=%7E'],
      ['https://api.example:8443/report?a=1', 'https://api.example:8443/report?a=1'],
      ['http://127.0.0.1:8080/x', 'http://127.0.0.1:8080/x'],
      ['http://[::1]:80/x', 'http://[::1]/x'],
      ['http://api.localhost/x', 'http://api.localhost/x'],
    ] as const) {
      expect(normalizeResourceUrl(raw, dev).resource, raw).to.equal(want);
    }
    expect(normalizeResourceUrl('HTTPS://API.EXAMPLE:443/x', dev).origin).to.equal('https://api.example');
  });

  it('refuses other schemes, http off loopback, http anywhere without the setting, credentials, fragments, controls and the own origin', () => {
    expect(refusal('javascript:alert(document.domain)//')).to.contain('only https');
    expect(refusal('http://merchant.example/x')).to.contain('only https');
    expect(refusal('http://127.0.0.1/x', prod)).to.contain('X402_DISCOVERY_ALLOW_HTTP_LOOPBACK');
    expect(refusal('https://a:b@merchant.example/x')).to.contain('credentials');
    expect(refusal('https://merchant.example/x#')).to.contain('fragment');
    expect(refusal('https://merchant.example/x\u0000')).to.contain('control');
    expect(refusal(' https://merchant.example/x\n')).to.contain('control');
    expect(refusal(' https://merchant.example/x')).to.contain('whitespace');
    expect(refusal('https://merchant.example/x\u00a0')).to.contain('whitespace');
    expect(refusal('https://PAY.example:443/v1/x402/demo')).to.contain('own origin');
    expect(refusal('/relative')).to.contain('not an absolute URL');
  });

  it('counts 127.0.0.0/8, ::1 and localhost as loopback, and nothing else', () => {
    expect(['localhost', 'a.localhost', '127.0.0.1', '127.255.0.9', '[::1]'].every(isLoopbackHost)).to.equal(true);
    expect(['localhost.example', '128.0.0.1', '10.0.0.1', '[::2]', '0.0.0.0'].some(isLoopbackHost)).to.equal(false);
  });
});
