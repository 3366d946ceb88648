/** Schemas of POST /v1/tokens/issue: the request, PolicyClaim (by variant), PaymentRecord, the bundle. */
import { MAX_CHALLENGE_LENGTH } from '../../src/kernel/auth/signed-messages.js';
import { base58Key, signatureSchema, u64String, type JsonSchema } from '../../src/kernel/http/schema.js';

const unixSeconds = (description: string, nullable = false): JsonSchema => ({ type: 'integer', ...(nullable ? { nullable: true } : {}), description: `${description} (unix seconds)` });

export const issueRequestSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'walletPublicKey is required unless transactionSignature (or, with proofs, nonce) is given; nonce and signature prove the wallet; the other fields narrow which policies count',
  properties: {
    walletPublicKey: { ...base58Key, description: 'the wallet the token is bound to (sub)' },
    tokenMint: { ...base58Key, description: 'only policies of this token mint' },
    policyAddress: { ...base58Key, description: 'only this payment policy' },
    recipient: { ...base58Key, description: 'only policies paying this recipient' },
    transactionSignature: { ...signatureSchema, description: 'a payment (PaymentRecord) made at most TOKEN_PAYMENT_MAX_AGE_SECONDS (600 s by default) ago, found in the index' },
    trackingId: { type: 'string', minLength: 1, maxLength: 64, description: 'checkout tracking id (the policy memo, at most 64 bytes of UTF-8)' },
    gateway: { ...base58Key, description: 'the gateway (account address) the token is for: only its policies and payments count, and only a verifier for it accepts the token. Default: the payment\'s (transactionSignature), else the one gateway of the matching policies' },
    nonce: { type: 'string', minLength: 1, maxLength: MAX_CHALLENGE_LENGTH, description: 'the nonce of POST /v1/tokens/challenge for this wallet (single use)' },
    signature: {
      description: 'the wallet\'s ed25519 signature of the nonce\'s UTF-8 bytes: 64 integers (as gateway verify takes it) or base58',
      oneOf: [
        { type: 'array', minItems: 64, maxItems: 64, items: { type: 'integer', minimum: 0, maximum: 255 } },
        { type: 'string', pattern: '^[1-9A-HJ-NP-Za-km-z]{64,90}$' },
      ],
    },
  },
};

export const challengeRequestSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['walletPublicKey'],
  properties: { walletPublicKey: { ...base58Key, description: 'the wallet a token will be asked for' } },
};

export const walletChallengeSchema: JsonSchema = {
  type: 'object',
  required: ['nonce', 'walletPublicKey', 'expiresAt'],
  properties: {
    nonce: { type: 'string', description: 'the text to sign: ed25519 over its UTF-8 bytes, by walletPublicKey. Single use. `tributary-wallet-token|<service>|<wallet>|<random>`: check the purpose, the service and the wallet before signing' },
    walletPublicKey: base58Key,
    expiresAt: { type: 'integer', description: 'Unix epoch milliseconds after which the nonce is refused' },
  },
};

const claimBase = {
  address: { ...base58Key, description: 'payment policy address' },
  gateway: base58Key,
  recipient: base58Key,
  tokenMint: { type: 'string', nullable: true },
  trackingId: { type: 'string' },
  status: { type: 'string', enum: ['Active', 'Completed'], description: 'Completed: only a subscription whose last renewal is paid, within the period it bought (and its grace)' },
  totalPaid: u64String,
  paymentCount: { type: 'integer' },
  validUntil: unixSeconds('until when the policy holds by its own terms; null when they set no end', true),
};
const baseRequired = Object.keys(claimBase);

const claim = (variant: string, props: Record<string, JsonSchema>, description: string): JsonSchema => ({
  type: 'object',
  description,
  required: ['variant', ...baseRequired, ...Object.keys(props)],
  properties: { variant: { type: 'string', enum: [variant] }, ...claimBase, ...props },
});

export const policyClaimSchema: JsonSchema = {
  description: 'Authorization proof: an Active payment policy of the wallet (or a Completed subscription within its last paid period), with the state of its variant',
  oneOf: [
    claim('Subscription', {
      amount: u64String, paymentFrequency: { type: 'string' }, frequencySeconds: u64String, autoRenew: { type: 'boolean' },
      maxRenewals: { type: 'integer', nullable: true, description: 'agreed at creation; null when unlimited' },
      renewalsRemaining: { type: 'integer', nullable: true, description: 'null when unlimited' },
      nextPaymentDue: unixSeconds('next payment due; the subscription is paid through then'),
      paymentStanding: {
        type: 'string', enum: ['paid', 'due', 'overdue', 'unpaid'],
        description: 'paid: not due yet; due: due, within the grace (a tenth of the period, at most SUBSCRIPTION_GRACE_SECONDS); overdue: past nextPaymentDue + the grace; unpaid: no payment yet (paymentCount 0), whatever nextPaymentDue says (its creator chose it). Access is not to be granted when overdue or unpaid',
      },
    }, 'Subscription: validUntil = nextPaymentDue + the grace (a tenth of the period, at most SUBSCRIPTION_GRACE_SECONDS); when overdue or unpaid, 5 minutes from now (the claim says which)'),
    claim('Milestone', {
      currentMilestone: { type: 'integer' }, totalMilestones: { type: 'integer' }, nextMilestoneAmount: { ...u64String, nullable: true },
      nextMilestoneAt: unixSeconds('time of the next milestone', true), escrowAmount: u64String,
    }, 'Milestone: validUntil = the next milestone time'),
    claim('PayAsYouGo', {
      maxAmountPerPeriod: u64String, maxChunkAmount: u64String, periodLengthSeconds: u64String,
      currentPeriodStart: unixSeconds('start of the period the clock is in'), currentPeriodEnd: unixSeconds('its end'),
      remainingThisPeriod: { ...u64String, description: 'what may still be charged this period' }, expiryDate: unixSeconds('expiry', true),
    }, 'PayAsYouGo: validUntil = expiryDate'),
    claim('OneTime', { amount: u64String, dueDate: unixSeconds('due date'), expiryDate: unixSeconds('expiry', true) }, 'OneTime: validUntil = expiryDate'),
    claim('UpTo', { maxAmount: u64String, validAfter: unixSeconds('valid after'), deadline: unixSeconds('deadline') }, 'UpTo: validUntil = deadline'),
  ],
  discriminator: { propertyName: 'variant' },
};

export const paymentRecordClaimSchema: JsonSchema = {
  type: 'object',
  description: 'Payment proof: a PaymentRecord event of the wallet',
  required: ['signature', 'slot', 'timestamp', 'amount', 'gateway', 'paymentPolicy', 'payer', 'recipient', 'tokenMint', 'recordId', 'trackingId'],
  properties: {
    signature: signatureSchema, slot: { type: 'integer' }, timestamp: unixSeconds('the program clock at the payment'),
    amount: u64String, gateway: base58Key, paymentPolicy: base58Key, payer: base58Key, recipient: base58Key, tokenMint: base58Key,
    recordId: { type: 'integer' }, trackingId: { type: 'string' },
  },
};

export const tokenBundleSchema: JsonSchema = {
  type: 'object',
  required: ['token', 'expiresAt', 'wallet', 'gateway', 'policies', 'lastPayments'],
  properties: {
    token: {
      type: 'string',
      description: 'ES256 JWT, verifiable through /v1/jwks: sub = wallet, iss, aud = JWT_AUDIENCE:gateway:<gateway> (the one gateway it is good at; verify with createTokenVerifier({gateway})), iat, nbf, exp, jti, role = "wallet", gateway, and the same policies and lastPayments. exp = the latest validUntil of the policies (or payment time + TOKEN_MAX_TTL_SECONDS), capped at now + TOKEN_MAX_TTL_SECONDS.',
    },
    expiresAt: { type: 'integer', description: 'the JWT\'s exp as unix epoch milliseconds' },
    wallet: { ...base58Key, description: 'the wallet the token is bound to (its sub)' },
    gateway: { ...base58Key, description: 'the gateway the token is good at (its aud names it alone)' },
    policies: { type: 'array', maxItems: 10, items: policyClaimSchema, description: 'at most 10, newest first; narrow with the filters' },
    lastPayments: { type: 'array', maxItems: 5, items: paymentRecordClaimSchema, description: 'latest payments of the wallet matching the filters, newest first (the proven one first)' },
  },
};
