/** Issue 15: the SSRF guard refuses IPv4-compatible IPv6 (::/96), however the URL spells it. */
import { expect } from 'chai';
import { blockedRange, checkLiteralHost, checkTarget, TargetRefused } from '../../infra/http/ssrf-guard.js';

describe('SSRF guard: ::/96', () => {
  it('refuses IPv4-compatible literals in URLs, which the URL parser rewrites to hex groups', async () => {
    for (const url of ['http://[::127.0.0.1]/', 'http://[::169.254.169.254]/latest', 'http://[::a9fe:a9fe]/', 'http://[::8.8.8.8]/', 'http://[0:0:0:0:0:0:a00:1]:8080/']) {
      const u = new URL(url);
      expect(() => checkLiteralHost(u), url).to.throw(TargetRefused);
      let refused = false;
      await checkTarget(u).catch((e: unknown) => { refused = e instanceof TargetRefused; });
      expect(refused, url).to.equal(true);
    }
  });

  it('refuses names resolving to ::/96, and still allows global unicast IPv6', async () => {
    let err: unknown;
    await checkTarget(new URL('http://hooks.example/'), async () => [{ address: '::7f00:1', family: 6 }]).catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(TargetRefused);
    expect(blockedRange('::7f00:1')).to.equal('ipv4Compatible');
    expect(blockedRange('2606:4700:4700::1111')).to.equal(undefined);
    expect(blockedRange('8.8.8.8')).to.equal(undefined);
  });
});
