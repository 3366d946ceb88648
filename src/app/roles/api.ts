/** The API role: the HTTP server (and what attaches to it) on PORT. */
import type { AppContext } from '../context.js';
import { startApiServer, type ServerAttachment } from '../api-server.js';
import type { RunningRole } from './role.js';
import { SERVER_ATTACHMENTS } from '../server-attachments.js';

export async function startApiRole(ctx: AppContext, attachments: readonly ServerAttachment[] = SERVER_ATTACHMENTS): Promise<RunningRole> {
  const server = await startApiServer(ctx, { attachments });
  ctx.logger.info({ port: server.port }, 'API listening');
  return { name: 'api', stop: () => server.close() };
}
