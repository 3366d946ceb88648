/**
 * The pages' shared helpers where a mistake would show a payer a wrong amount or sign the
 * wrong text: amounts with decimals, base58 and a transaction's first signature. Tested as
 * the browser runs them: bundled by esbuild from web/shared and loaded as a module (the
 * tests never import web/ directly).
 */
import path from 'node:path';
import { build } from 'esbuild';
import bs58 from 'bs58';
import fc from 'fast-check';
import { expect } from 'chai';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { WEB_ROOT } from '../../infra/http/web-assets.js';

interface Shared {
  amount(baseUnits: string | bigint, decimals: number): string;
  group(v: string | number): string;
  period(seconds: number): string;
  base58(bytes: Uint8Array): string;
  firstSignature(tx: Uint8Array): Uint8Array;
  toBase64(bytes: Uint8Array): string;
  fromBase64(text: string): Uint8Array;
}

async function loadShared(): Promise<Shared> {
  const shared = path.join(WEB_ROOT, 'shared');
  const out = await build({
    stdin: { contents: "export * from './format.ts'; export * from './bytes.ts';", resolveDir: shared, loader: 'ts' },
    bundle: true, write: false, format: 'esm', target: 'es2020', logLevel: 'silent',
  });
  return (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0]!.text).toString('base64')}`)) as Shared;
}

/** The reference: the decimal point placed by string arithmetic, trailing zeros cut, thousands grouped. */
function reference(units: bigint, decimals: number): string {
  const s = units.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

describe('web/shared as the browser runs it: amounts, base58, first signature', function () {
  this.timeout(30_000);
  let w: Shared;
  before(async () => { w = await loadShared(); });

  it('amounts with decimals, exactly, beyond 2^53', () => {
    expect(w.amount('1000000', 6)).to.equal('1');
    expect(w.amount('1500000', 6)).to.equal('1.5');
    expect(w.amount('1', 9)).to.equal('0.000000001');
    expect(w.amount('123456789012345678901', 6)).to.equal('123,456,789,012,345.678901');
    expect(w.amount('0', 6)).to.equal('0');
    expect(w.amount('42', 0)).to.equal('42');
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), fc.integer({ min: 0, max: 12 }), (units, d) => {
      expect(w.amount(units, d)).to.equal(reference(units, d));
    }), { numRuns: 500 });
  });

  it('periods and grouping in words', () => {
    expect(w.period(86_400)).to.equal('day');
    expect(w.period(2_592_000)).to.equal('30 days');
    expect(w.period(3_600 * 5)).to.equal('5 hours');
    expect(w.period(61)).to.equal('61 seconds');
    expect(w.group('1234567.5')).to.equal('1,234,567.5');
  });

  it('base58 matches the bs58 package, leading zeros included', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      expect(w.base58(bytes)).to.equal(bs58.encode(bytes));
    }), { numRuns: 500 });
    expect(w.base58(new Uint8Array([0, 0, 1]))).to.equal(bs58.encode(Buffer.from([0, 0, 1])));
  });

  it('the first signature of a signed transaction is its id; base64 goes both ways', () => {
    const payer = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 7)) })
      .add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 }));
    tx.sign(payer);
    const bytes = new Uint8Array(tx.serialize());
    expect(w.base58(w.firstSignature(bytes))).to.equal(bs58.encode(tx.signature!));
    expect(Buffer.from(w.fromBase64(w.toBase64(bytes))).equals(Buffer.from(bytes))).to.equal(true);
    expect(() => w.firstSignature(new Uint8Array([0]))).to.throw('no signature');
  });
});
