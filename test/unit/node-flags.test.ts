/**
 * node's options for the service's processes (infra/cluster/node-flags.ts) are the same
 * in the launchers that cannot import them: `make start` and the image's entrypoint.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../infra/cluster/node-flags.js';
import { cliCommand } from '../../infra/cluster/main.js';
import { ROOT } from '../support/process.js';

describe('node options of the service\'s processes', () => {
  it('are given by make start, the image and make cluster\'s roles alike', () => {
    const makeStart = /exec node (.*) dist\/src\/app\/cli\/bin\.js start/.exec(readFileSync(path.join(ROOT, 'Makefile'), 'utf8'))?.[1];
    expect(makeStart?.split(' ')).to.deep.equal([...SERVICE_NODE_FLAGS]);
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(path.join(ROOT, 'infra', 'deploy', 'Dockerfile'), 'utf8'))?.[1];
    expect(JSON.parse(entry ?? '[]')).to.deep.equal(['node', ...SERVICE_NODE_FLAGS, 'dist/src/app/cli/bin.js']);
    expect(cliCommand(ROOT, 'tsx').slice(1, 1 + SERVICE_NODE_FLAGS.length)).to.deep.equal([...SERVICE_NODE_FLAGS]);
  });
});
