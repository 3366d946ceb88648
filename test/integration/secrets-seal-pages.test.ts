/**
 * Sealing, re-sealing and checking read a column page by page (500 rows): every page is reached,
 * whether the rows are named by an integer (webhooks) or a text (kids, addresses). Pages
 * taken by the id's order while the rows were ordered by its text (the alias shadowing the
 * column) sealed 1,052 of 2,000 webhooks and left the others in plaintext.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { sealSecret } from '../../infra/crypto/secret-box.js';
import { withPreviousKeys } from '../../src/kernel/config/secret-key.js';
import { countPlain, resealColumn, surveyColumn, unopenedSecrets } from '../../infra/secrets/columns.js';
import { WEBHOOK_SECRETS } from '../../commands/webhooks/store.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';

const ROWS = 1_234;

describe('sealing a secret column of many pages', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await createTestEnv('secrets-seal-pages');
    const now = new Date();
    const rows = Array.from({ length: ROWS }, (_, i) => ({
      id: i + 1, gateway_pubkey: `g${i % 7}`, gateway_account: `a${i % 7}`, endpoint_url: `https://8.8.8.8/${i}`, active: true,
      secret: sealSecret(`whsec_${randomBytes(8).toString('hex')}`, secretAad(i + 1), undefined), created_at: now, updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 400) await env.db.insertInto('webhooks').values(rows.slice(i, i + 400)).execute();
  });
  after(async () => { await env?.close(); });

  it('seals every row, each once, and every row opens under the key and no other; re-seals every row once when the key is rotated', async () => {
    const key = randomBytes(32);
    expect(await countPlain(env.db, WEBHOOK_SECRETS)).to.equal(ROWS);
    const { sealed, resealed } = await resealColumn(env.db, WEBHOOK_SECRETS, key);
    expect(resealed).to.deep.equal([]);
    expect(sealed).to.have.length(ROWS);
    expect(new Set(sealed).size).to.equal(ROWS);
    expect(await countPlain(env.db, WEBHOOK_SECRETS)).to.equal(0);
    expect(await resealColumn(env.db, WEBHOOK_SECRETS, key)).to.deep.equal({ sealed: [], resealed: [] });
    expect(await unopenedSecrets(env.db, WEBHOOK_SECRETS, key, Date.now())).to.deep.equal([]);
    const wrong = await unopenedSecrets(env.db, WEBHOOK_SECRETS, randomBytes(32), Date.now());
    expect(wrong).to.have.length(ROWS);
    expect(wrong[0]).to.deep.equal({ kind: 'webhook secret', id: '1', reason: 'wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row' });

    // the key rotated: every page re-sealed under the new key, each row once
    const next = randomBytes(32);
    const rotated = withPreviousKeys(next, [key]);
    expect((await surveyColumn(env.db, WEBHOOK_SECRETS, rotated, Date.now(), 'all')).underPreviousKey).to.have.length(ROWS);
    const again = await resealColumn(env.db, WEBHOOK_SECRETS, rotated);
    expect(again.sealed).to.deep.equal([]);
    expect(new Set(again.resealed).size).to.equal(ROWS);
    expect(again.resealed).to.have.length(ROWS);
    expect(await resealColumn(env.db, WEBHOOK_SECRETS, rotated)).to.deep.equal({ sealed: [], resealed: [] });
    expect(await unopenedSecrets(env.db, WEBHOOK_SECRETS, next, Date.now())).to.deep.equal([]);
  });
});
