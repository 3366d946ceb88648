/** What attaches to the API node's raw HTTP server besides express (Socket.IO, whose rooms also hear exact payments). */
import type { ServerAttachment } from './api-server.js';
import { poolSyncAttachment } from '../../queries/pools/sync.js';
import { exactRealtimeAttachment } from './x402-exact.js';

export const SERVER_ATTACHMENTS: readonly ServerAttachment[] = [exactRealtimeAttachment(), poolSyncAttachment];
