/**
 * The audience of a wallet token (POST /v1/tokens/issue): one gateway. A token holds what a
 * wallet proved at one merchant, and the merchant it is shown to could show it elsewhere;
 * with the service's shared audience (JWT_AUDIENCE) a token paid at gateway A was taken by
 * any merchant verifying our JWTs, B included. So `aud` names the gateway alone, and a
 * verifier accepts it only when it asks for that gateway (createTokenVerifier's `gateway`).
 *
 *   aud = "<JWT_AUDIENCE>:gateway:<gateway account address>"
 *
 * It never contains the shared audience itself, so a verifier that asks for that (one
 * written before the binding) refuses the token instead of taking it anywhere.
 */
export function gatewayAudience(baseAudience: string, gateway: string): string {
  return `${baseAudience}:gateway:${gateway}`;
}

/**
 * The audiences of an x402 token (the JWT of a paid 402 exchange, role "x402"): the gateway
 * it was paid at, for its x402 tokens only, and the one requirement paid for.
 *
 *   aud = ["<JWT_AUDIENCE>:gateway:<gateway>:x402",
 *          "<JWT_AUDIENCE>:gateway:<gateway>:x402:<requirement id>"]
 *
 * A merchant verifying with plain JWKS + audience asks for the first (any requirement of
 * its gateway) or the second (one requirement); either refuses a token paid at another
 * gateway, a wallet token (whose aud is the gateway's alone) and a gateway sign-in token
 * (the shared audience). A requirement id hashes the terms, the gateway among them, not the
 * resource URL (routes with the same terms share one agreement), so there is no resource
 * audience.
 */
export function x402Audience(baseAudience: string, gateway: string): string {
  return `${gatewayAudience(baseAudience, gateway)}:x402`;
}

export function x402RequirementAudience(baseAudience: string, gateway: string, requirementId: string): string {
  return `${x402Audience(baseAudience, gateway)}:${requirementId}`;
}
