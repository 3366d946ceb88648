/** Shared request authentication: bearer parsing, gateway JWTs, the admin key. */
export { parseBearer } from './bearer.js';
export { ADMIN_KEY_HEADER, adminKeyMatches, checkAdminKey, requireAdminKey } from './admin-key.js';
export {
  checkGatewayWallet, GATEWAY_ROLE, requireGatewayToken, verifyGatewayToken,
  type CurrentGatewayKeys, type GatewayClaims, type RequestAuth, type RequireGatewayOptions, type TokenVerifier,
} from './gateway-token.js';
