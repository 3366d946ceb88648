/**
 * A reply rendered to bytes (infra/http/rendered.ts): the page's UTF-8 bytes whether
 * it is ASCII (copied as Latin-1) or not, or given as bytes already, and the envelope's
 * head kept before its data.
 */
import { expect } from 'chai';
import { render } from '../../infra/http/rendered.js';

describe('rendered replies', () => {
  it('encodes an ASCII page and a page with other characters as UTF-8', () => {
    for (const json of ['[{"memo":"order-1"}]', '[{"memo":"café ☕ 𝄞"}]', '[{"memo":"\u00ff\u0080"}]', '[]']) {
      const r = render({ json }, '/p', true);
      expect(r.body.equals(Buffer.from(json, 'utf8')), json).to.equal(true);
      expect(JSON.parse(r.body.toString('utf8'))).to.deep.equal(JSON.parse(json));
    }
  });

  it('keeps an envelope up to the end of its data, with no ETag (its timestamp changes per send)', () => {
    const r = render({ json: '[{"n":"é"}]', envelope: true }, '/p', true);
    expect(r.body.toString('utf8')).to.equal('{"success":true,"data":[{"n":"é"}]');
    expect(r.etag).to.equal(undefined);
  });

  it('answers a page given as bytes with the same bytes, ETag and envelope as its text', () => {
    for (const json of ['[{"memo":"order-1"}]', '[{"memo":"café ☕ 𝄞"}]', '[]']) {
      for (const envelope of [false, true]) {
        const text = render({ json, envelope }, '/p', true);
        const bytes = render({ json: Buffer.from(json, 'utf8'), envelope }, '/p', true);
        expect(bytes.body.equals(text.body), json).to.equal(true);
        expect(bytes.etag).to.equal(text.etag);
        expect(bytes.envelope).to.equal(envelope);
      }
    }
  });

  it('tags a kept body by its bytes', () => {
    const a = render({ body: { n: 'é' } }, '/p', true);
    expect(a.etag).to.equal(render({ body: { n: 'é' } }, '/p', true).etag);
    expect(a.etag).to.not.equal(render({ body: { n: 'e' } }, '/p', true).etag);
    expect(render({ body: { n: 'é' } }, '/p', false).etag).to.equal(undefined);
  });
});
