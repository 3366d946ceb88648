/**
 * Every projection the projector role runs, by name. A new read model registers here
 * (and its tables in infra/postgres/schema.ts and a migration in infra/migrations).
 */
import { archiveProjection } from './archive/projection.js';
import type { Projection } from './runner/projection.js';

export const PROJECTIONS: readonly Projection[] = [archiveProjection];

export function findProjection(name: string): Projection | undefined {
  return PROJECTIONS.find((p) => p.name === name);
}
