/** What attaches to the API node's raw HTTP server besides express (Socket.IO). */
import type { ServerAttachment } from './api-server.js';
import { poolSyncAttachment } from '../../queries/pools/sync.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';

export const SERVER_ATTACHMENTS: readonly ServerAttachment[] = [realtimeAttachment(), poolSyncAttachment];
