/** commands/x402/proof.ts: the exact message docs/proof-of-possession.md documents, and what the check refuses. */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { decodePaymentHeader, encodePaymentHeader } from '../../commands/x402/payload.js';
import { proofMessage, proofProblem, signPaymentProof } from '../../commands/x402/proof.js';

const NOW = 1_795_000_000;
const fields = { requirementId: 'a'.repeat(32), resource: 'http://localhost:3002/v1/x402/demo', transactionSignature: '5'.repeat(88) };

describe('x402 payment proof', () => {
  it('signs exactly tributary-x402|<requirement id>|<resource>|<transaction signature or ->|<signedAt>', () => {
    expect(proofMessage({ ...fields, signedAt: NOW })).to.equal(`tributary-x402|${'a'.repeat(32)}|http://localhost:3002/v1/x402/demo|${'5'.repeat(88)}|${NOW}`);
    expect(proofMessage({ ...fields, transactionSignature: undefined, signedAt: NOW })).to.equal(`tributary-x402|${'a'.repeat(32)}|http://localhost:3002/v1/x402/demo|-|${NOW}`);
  });

  it('accepts the payer\'s proof within 300 s, and names what is wrong otherwise', () => {
    const payer = Keypair.generate();
    const who = payer.publicKey.toBase58();
    const proof = signPaymentProof(payer.secretKey, fields, NOW);
    expect(proofProblem(proof, who, fields, NOW + 300)).to.equal(undefined);
    expect(proofProblem(proof, who, fields, NOW - 300)).to.equal(undefined);
    expect(proofProblem(undefined, who, fields, NOW)).to.match(/carries no proof/);
    expect(proofProblem(proof, who, fields, NOW + 301)).to.match(/more than 300 s/);
    expect(proofProblem(proof, Keypair.generate().publicKey.toBase58(), fields, NOW)).to.match(/not the payer's/);
    expect(proofProblem(proof, who, { ...fields, resource: 'http://localhost:3002/v1/other' }, NOW)).to.match(/not the payer's/);
    expect(proofProblem(proof, who, { ...fields, transactionSignature: undefined }, NOW)).to.match(/not the payer's/);
    expect(proofProblem(proof, bs58.encode(new Uint8Array(32)), fields, NOW)).to.match(/not the payer's/);
  });

  it('travels in the Payment header, and a malformed proof is refused at decoding', () => {
    const payer = Keypair.generate();
    const proof = signPaymentProof(payer.secretKey, fields, NOW);
    const header = encodePaymentHeader({ scheme: 'deferred', network: 'solana:localnet', id: fields.requirementId, payload: { serializedTransaction: 'AAAA', proof } });
    const d = decodePaymentHeader(header);
    expect(d.ok && d.payment.payload.proof).to.deep.equal(proof);
    const bad = (p: unknown) => decodePaymentHeader(Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'deferred', network: 'n', id: 'i', payload: { serializedTransaction: 'AAAA', proof: p } })).toString('base64'));
    for (const p of [null, 'x', { signedAt: '1', signature: proof.signature }, { signedAt: 1.5, signature: proof.signature }, { signedAt: NOW, signature: 'not base58 0OIl' }]) {
      expect(bad(p).ok, JSON.stringify(p)).to.equal(false);
    }
  });
});
