/** The pure parts of issue 17's receiver signals and signing: Retry-After, the 5-day rule, two signatures. */
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { FAILING_DISABLE_MS, retryAfterMs, streakExpired } from '../../commands/webhooks/delivery/endpoint-health.js';
import { newSigningSecret, signedHeaders } from '../../commands/webhooks/delivery/signer.js';
import { localRateLimiter } from '../../commands/webhooks/delivery/rate-limit.js';
import { EVENT_TYPE_CATALOG, WEBHOOK_EVENT_TYPES } from '../../commands/webhooks/delivery/event-types.js';

const DAY = 86_400_000;

describe('webhooks: receiver signals and signing (pure parts)', () => {
  it('reads Retry-After as seconds or an HTTP date, capped, and ignores what it cannot read', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('2', now, 60_000)).to.equal(2000);
    expect(retryAfterMs(' 0 ', now, 60_000)).to.equal(0);
    expect(retryAfterMs('3600', now, 60_000)).to.equal(60_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now, 60_000)).to.equal(30_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now, 60_000)).to.equal(0);
    for (const bad of [undefined, '', 'soon', '-5', '1.5']) expect(retryAfterMs(bad, now, 60_000), String(bad)).to.equal(undefined);
  });

  it('disables after 5 days of failures only with several failures spread over at least a day', () => {
    const first = new Date('2026-01-01T00:00:00Z');
    const at = (ms: number) => new Date(first.getTime() + ms);
    expect(streakExpired({ failing_since: first, last_failure_at: at(FAILING_DISABLE_MS), failure_count: 3 })).to.equal(true);
    expect(streakExpired({ failing_since: first, last_failure_at: at(5 * DAY - 1), failure_count: 50 })).to.equal(false);
    expect(streakExpired({ failing_since: first, last_failure_at: at(6 * DAY), failure_count: 2 })).to.equal(false);
  });

  it('signs with every secret, space-separated; a verifier holding either accepts', () => {
    const [a, b, c] = [newSigningSecret(), newSigningSecret(), newSigningSecret()];
    const body = '{"id":"e1"}';
    const h = signedHeaders([a, b], 'e1', Date.now(), body);
    expect(h['webhook-signature'].split(' ')).to.have.length(2);
    expect(h['webhook-signature'].split(' ').every((s) => s.startsWith('v1,'))).to.equal(true);
    for (const s of [a, b]) expect(() => new Webhook(s).verify(body, { ...h })).not.to.throw();
    expect(() => new Webhook(c).verify(body, { ...h })).to.throw();
    // one secret: the reference library's own signature
    const one = signedHeaders(a, 'e1', 1_767_225_600_000, body);
    expect(one['webhook-signature']).to.equal(new Webhook(a).sign('e1', new Date(1_767_225_600_000), body));
  });

  it('spaces slots 1000/limit ms apart and gives back what lies too far ahead', async () => {
    let t = 0;
    const limiter = localRateLimiter(() => t);
    expect(await limiter.reserve(1, 4, 600)).to.deep.equal({ waitMs: 0 });
    expect(await limiter.reserve(1, 4, 600)).to.deep.equal({ waitMs: 250 });
    expect(await limiter.reserve(2, 4, 600)).to.deep.equal({ waitMs: 0 }); // per endpoint
    expect(await limiter.reserve(1, 4, 600)).to.deep.equal({ waitMs: 500 });
    expect(await limiter.reserve(1, 4, 600)).to.deep.equal({ laterMs: 750 });
    t = 1000;
    expect(await limiter.reserve(1, 4, 600)).to.deep.equal({ waitMs: 0 });
  });

  it('catalogs every event type once, each with an example of its own type', () => {
    expect(new Set(WEBHOOK_EVENT_TYPES).size).to.equal(WEBHOOK_EVENT_TYPES.length);
    expect(EVENT_TYPE_CATALOG.map((t) => t.name)).to.deep.equal([...WEBHOOK_EVENT_TYPES]);
    for (const t of EVENT_TYPE_CATALOG) expect(t.example.type).to.equal(t.name);
  });
});
