/**
 * Live payments for the merchant dashboard: the Socket.IO namespace /merchant on the
 * same server as /ws/v1's default namespace. A socket authenticates in its handshake
 * (`auth: {gateway, token}` with the gateway JWT, or `{gateway, adminKey}`), then sits in
 * its gateway's room; the notifier emits every payment there as well as to its
 * trackingId's room, through the same Redis adapter. No catch-up here: the dashboard
 * reads the latest payments over HTTP and appends what arrives.
 */
import type { Server } from 'socket.io';
import { adminKeyMatches } from '../../src/kernel/auth/admin-key.js';
import { checkGatewayWallet, verifyGatewayToken, type CurrentGatewayKeys, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';

export const MERCHANT_NAMESPACE = '/merchant';
export const gatewayRoom = (gateway: string): string => `gateway:${gateway}`;

interface HandshakeAuth { gateway?: unknown; token?: unknown; adminKey?: unknown }

export function attachMerchantLive(io: Server, verifier: TokenVerifier, adminKey: string | undefined, keys: CurrentGatewayKeys): void {
  const ns = io.of(MERCHANT_NAMESPACE);
  ns.use((socket, next) => {
    const auth = socket.handshake.auth as HandshakeAuth;
    const gateway = typeof auth.gateway === 'string' && isPublicKey(auth.gateway) ? auth.gateway : undefined;
    if (gateway === undefined) { next(new Error('invalid_input: gateway')); return; }
    const check = async (): Promise<void> => {
      if (adminKey && typeof auth.adminKey === 'string') {
        if (!adminKeyMatches(adminKey, auth.adminKey)) throw new Error('unauthorized');
        return;
      }
      if (typeof auth.token !== 'string') throw new Error('unauthorized');
      const claims = await verifyGatewayToken(verifier, auth.token);
      if (claims.gateway !== gateway) throw new Error('forbidden');
      await checkGatewayWallet(keys, claims.gateway, claims.signer);
    };
    check().then(() => {
      (socket.data as { gateway?: string }).gateway = gateway;
      next();
    }, (err: Error) => next(new Error(err.message === 'forbidden' ? 'forbidden' : 'unauthorized')));
  });
  ns.on('connection', (socket) => {
    void socket.join(gatewayRoom((socket.data as { gateway: string }).gateway));
  });
}
