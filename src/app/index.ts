/**
 * The package entry: what a merchant or a paying client imports.
 *
 *   - `paymentRequired(requirements, deps)`: Express middleware that sells a route under
 *     the payment-gated protocol (HTTP 402, schemes `deferred` and `x402://payg`); its
 *     deps are a JSON-RPC client of the chain (`createRpcClient`), Redis, and a signer of
 *     JWTs (the service's key ring, or any `X402Signer`). Mount it for every method
 *     of the path (`app.all(path, guard, handler)`): SPEC's flow covers any method.
 *     `x402Grant(res)` tells the handler who paid. The Payment header's format:
 *     `encodePaymentHeader`; its payer's proof: `signPaymentProof` over `proofMessage`.
 *   - `payAndFetch(url, {wallet, rpcUrl})`: the paying client (402 → Payment → JWT → content).
 *   - `createTokenVerifier({jwksUrl, gateway})`: verifies the service's JWTs against its JWKS
 *     (wallet tokens, and x402 tokens with `verifyX402Token`, only when issued for `gateway`).
 */
export {
  paymentRequired, x402Grant, type X402Deps, type X402Grant, type PaymentRequiredOptions,
} from '../../commands/x402/middleware.js';
export { normalizeRequirement, acceptedRequirement } from '../../commands/x402/requirement-forms.js';
export {
  paymentRequiredHeader, parseKeyValueHeader, RequirementError, SCHEMES, X402_VERSION,
  type PaymentRequirementInput, type PaymentRequirement, type AcceptedRequirement, type Scheme,
} from '../../commands/x402/requirements.js';
export { encodePaymentHeader, decodePaymentHeader, type PaymentPayload } from '../../commands/x402/payload.js';
export { proofMessage, signPaymentProof, PROOF_WINDOW_SECONDS, type PaymentProof } from '../../commands/x402/proof.js';
export type { X402Signer, X402Claims } from '../../commands/x402/tokens.js';
export { buildPayment, type BuiltPayment } from '../../commands/x402/payment-transaction.js';
export {
  payAndFetch, pickRequirement, memoryTokenStore, fileTokenStore, PaymentFailed,
  type PayOptions, type PayResult, type Paid, type TokenStore,
} from '../../commands/x402/client/pay.js';
export {
  createTokenVerifier, type TokenVerifier, type VerifierOptions, type WalletTokenClaims, type X402TokenClaims, type PolicyClaim, type PaymentRecordClaim,
} from '../../commands/x402/client/verify-token.js';
export { createRpcClient, type RpcClient, type RpcClientOptions } from '../../infra/solana/rpc-client.js';
