/**
 * The decoder that reads event bytes straight from the IDL (borsh-reader.ts) gives what
 * Anchor's BorshCoder and the codec's normalization give, for every event type: random
 * events encoded by Anchor, and the same with bytes changed at random. One difference is
 * deliberate: a payload too short for its event is refused, where Anchor's coder reads
 * past the end and yields zero-filled or short keys.
 */
import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import { decodeEventPayload, decodeEventPayloadWithAnchor } from '../../src/kernel/events/codec.js';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import { createPrng } from '../../infra/localnet/prng.js';
import { encodeEventPayload, eventFields } from '../support/anchor-events.js';

const anchor = decodeEventPayloadWithAnchor;
/** as JSON text, so the fields' order counts too (it is the stream entry's and the stored documents' order) */
const text = (v: unknown) => JSON.stringify(v);
const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc(512)]).toString('base64');

describe('event decoder straight from the bytes, against Anchor', () => {
  for (const name of EVENT_NAMES) {
    it(`${name}: 40 random events, each with 20 random byte changes, and every truncation`, () => {
      const rng = createPrng(`borsh-reader:${name}`);
      let agreed = 0;
      for (let seed = 0; seed < 40; seed += 1) {
        const bytes = Buffer.from(encodeEventPayload(name, eventFields(name, {}, `${name}:${seed}`)), 'base64');
        const b64 = bytes.toString('base64');
        expect(decodeEventPayload(b64)?.name).to.equal(name);
        expect(text(decodeEventPayload(b64)), `${name} seed ${seed}`).to.equal(text(anchor(b64)));
        if (seed === 0) {
          for (let n = 0; n < bytes.length; n += 1) expect(decodeEventPayload(bytes.subarray(0, n).toString('base64')), `cut at ${n}`).to.equal(undefined);
        }
        for (let k = 0; k < 20; k += 1) {
          const changed = Buffer.from(bytes);
          // past the discriminator: a tag, a flag, a length or a value
          const at = 8 + rng.int(changed.length - 8);
          changed[at] = rng.int(4) === 0 ? 2 : rng.int(256);
          const what = `${name} seed ${seed} byte ${at} = ${changed[at]}`;
          const ours = decodeEventPayload(changed.toString('base64'));
          if (ours !== undefined) {
            expect(text(ours), what).to.equal(text(anchor(changed.toString('base64'))));
            agreed += 1;
          } else if (anchor(changed.toString('base64')) !== undefined) {
            // refused only for want of bytes (a tag now announces a value): with more bytes, the two agree
            expect(text(decodeEventPayload(pad(changed))), what).to.equal(text(anchor(pad(changed))));
          }
        }
      }
      expect(agreed).to.be.greaterThan(400);
    });
  }

  it('tells apart keys that share their first bytes, or all but their last (they land on one slot of the key cache, chosen by the first eight)', () => {
    const keys: PublicKey[] = [];
    const base = Buffer.alloc(32, 7);
    for (const at of [4, 8, 16, 28, 31]) {
      const k = Buffer.from(base);
      k[at] = 9;
      keys.push(new PublicKey(k));
    }
    keys.push(new PublicKey(Buffer.concat([Buffer.from([4]), base.subarray(1)])), new PublicKey(base));
    for (let round = 0; round < 2; round += 1) {
      for (const key of keys) {
        const b64 = encodeEventPayload('GatewayFeeBpsChanged', eventFields('GatewayFeeBpsChanged', { gateway: key.toBase58() }, 1));
        expect((decodeEventPayload(b64)?.data as Record<string, unknown> | undefined)?.['gateway'], `round ${round}`).to.equal(key.toBase58());
      }
    }
  });

  it('refuses an unknown discriminator and a payload shorter than one', () => {
    expect(decodeEventPayload(Buffer.alloc(40, 1).toString('base64'))).to.equal(undefined);
    expect(decodeEventPayload('AAEC')).to.equal(undefined);
  });
});
