/**
 * Who may sign in for a gateway: its authority and its signer. The contract a source
 * must meet (the read model today; a chain read could meet it too): undefined when the
 * gateway does not exist or was deleted; an upstream_unavailable AppError when the
 * source cannot answer.
 */
export interface GatewayKeys { authority: string; signer: string }

export type GatewayLookup = (address: string) => Promise<GatewayKeys | undefined>;
