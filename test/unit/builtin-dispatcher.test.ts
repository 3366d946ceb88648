/**
 * Node's built-in fetch keeps its own dispatcher in a process that loads the npm undici
 * (infra/http/builtin-dispatcher.ts): a fetch that sets content-length itself, as
 * @solana/kit's RPC transport does (the @x402/svm clients), still goes through.
 */
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';

describe('the built-in fetch beside the npm undici', () => {
  it('answers a fetch that sets content-length after the outbound POST module is loaded', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/support/dispatcher-probe.ts'], { encoding: 'utf8', timeout: 60_000 });
    expect(out.trim()).to.equal('status 200');
  });
});
