/** Something that attaches to the API node's raw HTTP server besides express (Socket.IO, the pools sync). */
import type { Server } from 'node:http';
import type { AppContext } from '../context.js';

export type ServerAttachment = (server: Server, ctx: AppContext) => Promise<{ close(): Promise<void> }>;
