/**
 * The pure parts of webhooks: which gateway each event kind concerns, the SSRF guard's
 * address ranges, the retry schedule and leases, the delivery body, secrets at rest.
 */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { makeEvent } from '../support/anchor-events.js';
import { EVENT_NAMES, type EventName } from '../../src/kernel/events/catalog.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { concernOf } from '../../projections/webhooks/concerns.js';
import { apiEventOf } from '../../projections/webhooks/projection.js';
import { blockedRange, checkTarget, TargetRefused } from '../../infra/http/ssrf-guard.js';
import { afterFailedRound, claimLeaseMs, quickDelays, retryLeaseMs } from '../../commands/webhooks/delivery/schedule.js';
import { claimedBody, deliveryBody } from '../../commands/webhooks/delivery/deliver.js';
import { openSecret, sealSecret, SecretBoxError } from '../../infra/crypto/secret-box.js';
import { newSigningSecret, secretKey } from '../../commands/webhooks/delivery/signer.js';
import { createSecretKeys } from '../../commands/webhooks/delivery/secret-keys.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';

const pda = createPdaDeriver(PROGRAM_ID);
const key = () => Keypair.generate().publicKey.toBase58();

describe('webhooks: pure parts', () => {
  describe('which gateway an event concerns', () => {
    const byGatewayField: EventName[] = [
      'PaymentRecord', 'ReferralRewardDistributedRecord', 'ComposableExecuted', 'PaymentPolicyCreated', 'ComposablePolicyCreated',
      'PaymentGatewayDeleted', 'GatewayFeeBpsChanged', 'GatewayFeeRecipientChanged', 'GatewaySignerChanged',
    ];
    const none: EventName[] = ['UserPaymentCreated', 'UserPaymentDeleted', 'ProgramConfigCreated', 'ProgramAuthorityChanged', 'EmergencyPauseChanged'];

    it('covers every event kind of the catalog', () => {
      const covered = new Set([...byGatewayField, ...none, 'PaymentGatewayCreated', 'PaymentPolicyStatusChanged', 'PaymentPolicyDeleted', 'ComposablePolicyStatusChanged', 'ComposablePolicyDeleted']);
      expect([...covered].sort()).to.deep.equal([...EVENT_NAMES].sort());
    });

    it('names the gateway account, or derives it from the authority, or goes through the policy', () => {
      for (const name of byGatewayField) {
        const gateway = key();
        expect(concernOf(makeEvent(name, { gateway }), pda), name).to.deep.equal({ kind: 'gateway', gateway });
      }
      const authority = key();
      expect(concernOf(makeEvent('PaymentGatewayCreated', { authority }), pda)).to.deep.equal({ kind: 'gateway', gateway: pda.gateway(authority) });
      for (const [name, field, policyKind] of [
        ['PaymentPolicyStatusChanged', 'payment_policy', 'payment'], ['PaymentPolicyDeleted', 'payment_policy', 'payment'],
        ['ComposablePolicyStatusChanged', 'composable_policy', 'composable'], ['ComposablePolicyDeleted', 'composable_policy', 'composable'],
      ] as const) {
        const policy = key();
        expect(concernOf(makeEvent(name, { [field]: policy }), pda), name).to.deep.equal({ kind: 'policy', policyKind, policy });
      }
      for (const name of none) expect(concernOf(makeEvent(name), pda), name).to.deep.equal({ kind: 'none' });
    });
  });

  describe('SSRF guard', () => {
    it('allows only global unicast addresses', () => {
      for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(blockedRange(ip), ip).to.equal(undefined);
      const blocked: Record<string, string> = {
        '127.0.0.1': 'loopback', '10.0.0.1': 'private', '172.16.5.4': 'private', '192.168.0.1': 'private', '169.254.169.254': 'linkLocal',
        '100.100.100.200': 'carrierGradeNat', '0.0.0.0': 'unspecified', '255.255.255.255': 'broadcast', '224.0.0.1': 'multicast',
        '::1': 'loopback', '::': 'unspecified', 'fe80::1': 'linkLocal', 'fd00::1': 'uniqueLocal', 'fd00:ec2::254': 'uniqueLocal',
        '::ffff:127.0.0.1': 'loopback', '::ffff:169.254.169.254': 'linkLocal', '64:ff9b::a00:1': 'rfc6052', 'not-an-ip': 'unparseable',
      };
      for (const [ip, range] of Object.entries(blocked)) expect(blockedRange(ip), ip).to.equal(range);
    });

    it('refuses a name when any of its addresses is refused, or when it does not resolve', async () => {
      const resolveTo = (...addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      await checkTarget(new URL('https://hooks.example.com/x'), resolveTo('93.184.216.34'));
      for (const [resolver, pattern] of [
        [resolveTo('93.184.216.34', '10.0.0.7'), /10\.0\.0\.7, a private address/],
        [resolveTo('169.254.169.254'), /linkLocal/],
        [resolveTo(), /does not resolve/],
        [async () => { throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' }); }, /ENOTFOUND/],
      ] as const) {
        const err = await checkTarget(new URL('https://hooks.example.com/x'), resolver).then(() => undefined, (e: unknown) => e);
        expect(err).to.be.instanceOf(TargetRefused);
        expect((err as Error).message).to.match(pattern);
      }
    });
  });

  describe('schedule', () => {
    const cfg = { timeoutMs: 10_000, retryDelaysMs: [1000, 2000, 3000], slowScheduleMs: [60_000, 300_000] };

    it('retries quickly in the first round only, then follows the slow schedule, then dead', () => {
      expect(quickDelays(cfg, 0)).to.deep.equal([1000, 2000, 3000]);
      expect(quickDelays(cfg, 1)).to.deep.equal([]);
      expect(afterFailedRound(cfg, 0)).to.deep.equal({ status: 'pending', round: 1, delayMs: 60_000 });
      expect(afterFailedRound(cfg, 1)).to.deep.equal({ status: 'pending', round: 2, delayMs: 300_000 });
      expect(afterFailedRound(cfg, 2)).to.deep.equal({ status: 'dead' });
    });

    it('leases one attempt at a time, plus a margin', () => {
      expect(claimLeaseMs(cfg)).to.equal(15_000);
      expect(retryLeaseMs(cfg, 2000)).to.equal(17_000);
      expect(claimLeaseMs({ ...cfg, timeoutMs: 300 })).to.equal(1300);
    });
  });

  it('builds the body {id, type, createdAt, data}, createdAt from the block time or else the queueing time', () => {
    const e = makeEvent('PaymentRecord', { gateway: key() }, { seed: 'body', blockTime: 1_750_000_000 });
    const payload = apiEventOf(e);
    const queued = new Date('2026-01-02T03:04:05.000Z');
    const body = JSON.parse(deliveryBody({ event_id: e.id, event_name: e.name, payload, created_at: queued }));
    expect(body).to.deep.equal({ id: e.id, type: 'PaymentRecord', createdAt: '2025-06-15T15:06:40.000Z', data: JSON.parse(JSON.stringify(payload)) });
    const noTime = apiEventOf({ ...e, blockTime: null });
    expect(JSON.parse(deliveryBody({ event_id: e.id, event_name: e.name, payload: noTime, created_at: queued })).createdAt).to.equal(queued.toISOString());
    // the worker splices the stored JSON text instead: the same bytes
    for (const p of [payload, noTime]) {
      const text = JSON.stringify(p);
      expect(claimedBody({ event_id: e.id, event_name: e.name, payload_text: text, payload_timestamp: p.timestamp, created_at: queued }))
        .to.equal(deliveryBody({ event_id: e.id, event_name: e.name, payload: p, created_at: queued }));
    }
  });

  it('keeps secrets encrypted at rest, bound to their webhook', () => {
    const k = Buffer.alloc(32, 3);
    const secret = newSigningSecret();
    const sealed = sealSecret(secret, 'webhook:1', k);
    expect(sealed).to.match(/^aes-256-gcm:v1:/);
    expect(sealed).to.not.contain(secret.slice(6, 20));
    expect(openSecret(sealed, 'webhook:1', k)).to.equal(secret);
    expect(() => openSecret(sealed, 'webhook:2', k)).to.throw(SecretBoxError);
    expect(() => openSecret(sealed, 'webhook:1', Buffer.alloc(32, 4))).to.throw(SecretBoxError);
    expect(() => openSecret(sealed, 'webhook:1', undefined)).to.throw(SecretBoxError, /SIGNING_KEY_ENCRYPTION_KEY/);
    expect(openSecret(sealSecret(secret, 'webhook:1', undefined), 'webhook:1', undefined)).to.equal(secret);
  });

  it('opens a webhook\'s sealed secret once, and follows a rotation: the new secret, then the previous one while in grace', () => {
    const k = Buffer.alloc(32, 3);
    let now = 1_000_000;
    const keysOf = createSecretKeys(k, () => now);
    const [a, b] = [newSigningSecret(), newSigningSecret()];
    const sealedA = sealSecret(a, secretAad(7), k);
    const first = keysOf({ webhook_id: 7, secret: sealedA, previous_secret: null, previous_secret_until: null });
    expect(first).to.deep.equal([secretKey(a)]);
    // the same key object: opened once
    expect(keysOf({ webhook_id: 7, secret: sealedA, previous_secret: null, previous_secret_until: null })[0]).to.equal(first[0]);
    const rotated = { webhook_id: 7, secret: sealSecret(b, secretAad(7), k), previous_secret: sealedA, previous_secret_until: new Date(now + 1000) };
    expect(keysOf(rotated)).to.deep.equal([secretKey(b), secretKey(a)]);
    now += 2000;
    expect(keysOf(rotated)).to.deep.equal([secretKey(b)]);
    // another webhook's secret is its own, bound to its id
    expect(() => keysOf({ webhook_id: 8, secret: sealedA, previous_secret: null, previous_secret_until: null })).to.throw(SecretBoxError);
  });
});
