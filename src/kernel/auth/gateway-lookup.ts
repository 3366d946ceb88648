/**
 * Who may sign in for a gateway: its authority and its signer, while the gateway is
 * active. The contract a source must meet (the chain, the read model): undefined when the
 * gateway does not exist or was deleted; an upstream_unavailable AppError when the
 * source cannot answer.
 */
export interface GatewayKeys {
  authority: string; signer: string; active: boolean;
  /** gateway JWTs issued before this (unix s) were revoked by the gateway (commands/gateway-auth/session-floors.ts) */
  sessionsFrom?: number;
}

export type GatewayLookup = (address: string) => Promise<GatewayKeys | undefined>;
