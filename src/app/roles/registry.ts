/** Every role a process can run: `tributary serve --role <name>`. */
import type { RoleStarter } from './role.js';
import { startApiRole } from './api.js';
import { startProjectorRole } from './projector.js';
import { startWebhooksRole } from './webhooks.js';
import { startNotifierRole } from './notifier.js';
import { startIndexerRole } from './indexer.js';
import { startSchedulerRole } from './scheduler.js';

export const ROLES: Readonly<Record<string, RoleStarter>> = {
  api: (ctx) => startApiRole(ctx),
  projector: startProjectorRole,
  webhooks: startWebhooksRole,
  notifier: startNotifierRole,
  indexer: startIndexerRole,
  scheduler: startSchedulerRole,
};
