import fs from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// `npm install` warns EBADENGINE for every locked package whose `engines.node` excludes a Node
// version that ours accepts (cookie 2 wanted Node 22 through light-my-request): the lockfile
// must hold only packages that run on the oldest Node that package.json promises.

type Lock = { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

const read = <T>(file: string): T => JSON.parse(fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as T;

describe('engines', () => {
  it('every locked package accepts the oldest Node that package.json accepts', () => {
    const oldest = semver.minVersion(read<{ engines: { node: string } }>('package.json').engines.node)!.version;
    const refused = Object.entries(read<Lock>('package-lock.json').packages)
      .filter(([, pkg]) => !Array.isArray(pkg.engines) && pkg.engines?.node !== undefined)
      .filter(([, pkg]) => !semver.satisfies(oldest, (pkg.engines as { node: string }).node))
      .map(([path, pkg]) => `${path}@${pkg.version} wants node ${(pkg.engines as { node: string }).node}`);
    expect(refused).toEqual([]);
  });
});
