/**
 * The localnet renders a transaction's getTransaction answer once per encoding and version
 * flag, and keeps only the transactions rendered last: one rendered before them is
 * rendered again, to the same text.
 */
import { expect } from 'chai';
import { createChain } from '../../infra/localnet/chain.js';
import { createGenesisAccounts, deriveActors, runGenesisTransactions } from '../../infra/localnet/genesis.js';
import { renderedAnswers } from '../../infra/localnet/rpc-transactions.js';

describe('localnet rendered getTransaction answers', () => {
  const chain = createChain('rendered', () => 1_800_000_000_000);
  const actors = deriveActors('rendered');
  createGenesisAccounts(chain, actors);
  runGenesisTransactions(chain, actors);
  const [a, b, c] = chain.transactions();

  it('serves each rendering again while it is kept, per encoding and version flag', () => {
    const answer = renderedAnswers(2);
    const json = answer(a!, 'json', true);
    expect(answer(a!, 'json', true)).to.equal(json);
    const unversioned = answer(a!, 'json', false);
    const base64 = answer(a!, 'base64', true);
    expect(new Set([json, unversioned, base64]).size).to.equal(3);
    expect(JSON.parse(json.text)).to.have.property('version');
    expect(JSON.parse(unversioned.text)).to.not.have.property('version');
    expect((JSON.parse(base64.text) as { transaction: unknown[] }).transaction[1]).to.equal('base64');
    expect(JSON.parse(json.text).transaction.signatures[0]).to.equal(a!.signature);
  });

  it('keeps only the transactions rendered last, and renders an older one again to the same text', () => {
    const answer = renderedAnswers(2);
    const first = answer(a!, 'json', true);
    const second = answer(b!, 'json', true);
    const third = answer(c!, 'json', true); // a goes: two are kept
    expect(answer(c!, 'json', true)).to.equal(third);
    expect(answer(b!, 'json', true)).to.equal(second);
    const again = answer(a!, 'json', true); // rendered again; b goes
    expect(again).to.not.equal(first);
    expect(again.text).to.equal(first.text);
    expect(answer(b!, 'json', true)).to.not.equal(second);
    expect(answer(c!, 'json', true)).to.not.equal(third); // c went when b came back
  });
});
