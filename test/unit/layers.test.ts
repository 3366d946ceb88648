/**
 * The layer rule (.dependency-cruiser.cjs) catches what it forbids: each case writes a
 * two-file tree with one import into a scratch folder laid out like the repository and
 * cruises it with the repository's rule set. `make lint` runs the same rules on the tree.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';

const require = createRequire(import.meta.url);
const ruleSet = require('../../.dependency-cruiser.cjs') as IConfiguration;

/** Violated rule names when `from` imports `to` (repository-relative paths). */
async function violations(from: string, to: string): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
  try {
    for (const f of [from, to]) mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
    const spec = path.relative(path.dirname(from), to).replace(/\.ts$/, '');
    writeFileSync(path.join(dir, from), `import { x } from '${spec.startsWith('.') ? spec : `./${spec}`}';\nexport const y = x;\n`);
    writeFileSync(path.join(dir, to), 'export const x = 1;\n');
    const result = await cruise([from], {
      baseDir: dir, validate: true, ruleSet: { forbidden: ruleSet.forbidden ?? [] }, tsPreCompilationDeps: true,
    });
    const output = result.output as ICruiseResult;
    return output.summary.violations.map((v) => v.rule.name);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the layer rule', () => {
  it('refuses a kernel module importing anything but the kernel', async () => {
    expect(await violations('src/kernel/domain/probe.ts', 'projections/payments/projection.ts')).to.include('kernel-imports-only-the-kernel');
    expect(await violations('src/kernel/http/probe.ts', 'src/app/route-modules.ts')).to.include('kernel-imports-only-the-kernel');
    expect(await violations('src/kernel/auth/probe.ts', 'infra/log/logger.ts')).to.include('kernel-imports-only-the-kernel');
    expect(await violations('src/kernel/http/probe.ts', 'infra/http/routes.ts')).to.include('kernel-imports-only-the-kernel');
    expect(await violations('src/kernel/auth/probe.ts', 'src/kernel/domain/clock.ts')).to.deep.equal([]);
  });

  it('refuses a projection importing a query or a command module', async () => {
    expect(await violations('projections/payments/probe.ts', 'queries/events/events-query.ts')).to.include('projections-import-no-query-or-command');
    expect(await violations('projections/payments/probe.ts', 'commands/x402/settle.ts')).to.include('projections-import-no-query-or-command');
  });

  it('refuses product code importing the localnet, and a migration importing the app', async () => {
    expect(await violations('commands/x402/probe.ts', 'infra/localnet/keys.ts')).to.include('product-code-never-imports-the-localnet');
    expect(await violations('infra/migrations/0999_probe.ts', 'src/kernel/events/codec.ts')).to.include('migrations-import-nothing-of-the-app');
  });

  it('refuses the read and write sides importing each other', async () => {
    expect(await violations('queries/policies/probe.ts', 'commands/tokens/issue.ts')).to.include('queries-read-projections-tables-only');
    expect(await violations('commands/x402/probe.ts', 'queries/policies/routes.ts')).to.include('commands-read-projections-tables-only');
  });

  it('refuses any layer but the composition root importing the whole context', async () => {
    expect(await violations('commands/x402/probe.ts', 'src/app/context.ts')).to.include('only-the-composition-root-sees-the-context');
    expect(await violations('queries/events/probe.ts', 'src/app/context.ts')).to.include('only-the-composition-root-sees-the-context');
    expect(await violations('infra/redis/probe.ts', 'src/app/context.ts')).to.include('only-the-composition-root-sees-the-context');
    expect(await violations('src/kernel/http/probe.ts', 'src/app/context.ts')).to.include('only-the-composition-root-sees-the-context');
    expect(await violations('src/app/probe.ts', 'src/app/context.ts')).to.deep.equal([]);
  });

  it('allows what the layers allow', async () => {
    expect(await violations('queries/policies/probe.ts', 'projections/policies/tables.ts')).to.deep.equal([]);
    expect(await violations('commands/x402/probe.ts', 'src/kernel/domain/policy.ts')).to.deep.equal([]);
    expect(await violations('infra/postgres/schema.ts', 'projections/payments/tables.ts')).to.deep.equal([]);
    expect(await violations('src/app/route-modules.ts', 'queries/policies/routes.ts')).to.deep.equal([]);
  });
});
