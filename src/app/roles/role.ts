/** A role is one kind of process of the service; several roles may share a process. */
import type { AppContext } from '../context.js';

export interface RunningRole {
  readonly name: string;
  /** finishes work in flight, then releases what it holds */
  stop(): Promise<void>;
}

export type RoleStarter = (ctx: AppContext) => Promise<RunningRole>;
