/**
 * Issue 41, finding 7: the pages' Content-Security-Policy lets their scripts connect to
 * their own origin alone. CSP3's 'self' covers the same origin's ws: and wss: as well, so
 * the dashboard's Socket.IO needs no scheme source; a bare `ws:`, `wss:`, `https:` or `*`
 * would let a script injected into a page send what it reads to any host.
 */
import { expect } from 'chai';
import { PAGE_CSP } from '../../infra/http/web-assets.js';

function directives(csp: string): Map<string, string[]> {
  return new Map(csp.split(';').map((d) => d.trim()).filter((d) => d.length > 0).map((d) => {
    const [name, ...sources] = d.split(/\s+/);
    return [name!.toLowerCase(), sources];
  }));
}

describe('page CSP: connections to this origin only', () => {
  const csp = directives(PAGE_CSP);

  it('connect-src is \'self\' alone: no scheme source (ws:, wss:, http:, https:), no wildcard', () => {
    const connect = csp.get('connect-src');
    expect(connect, 'connect-src is set (default-src would not say it as plainly)').to.not.equal(undefined);
    expect(connect!.filter((s) => /^[a-z][a-z0-9+.-]*:$/i.test(s)), 'scheme sources').to.deep.equal([]);
    expect(connect!.filter((s) => s.includes('*')), 'wildcards').to.deep.equal([]);
    expect(connect).to.deep.equal(["'self'"]);
  });

  it('no directive allows a whole scheme or any host', () => {
    for (const [name, sources] of csp) {
      // data: images only (the pages draw no remote image)
      const schemes = sources.filter((s) => /^[a-z][a-z0-9+.-]*:$/i.test(s) && !(name === 'img-src' && s === 'data:'));
      expect(schemes, name).to.deep.equal([]);
      expect(sources.filter((s) => s.includes('*')), name).to.deep.equal([]);
    }
  });
});
