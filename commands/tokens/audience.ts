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
