import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVE_NODE_ARGS } from '../../bench/lib/server.js';

// The benchmarks and the tests that start a real server run it as `npm start` does: with the
// same flags for Node (the heap limit that keeps the process under 300 MB when overloaded).

describe('npm start', () => {
  it('runs loyalty serve with the Node flags the benchmarks measure', () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`node ${SERVE_NODE_ARGS.join(' ')} dist/src/main.js serve`);
  });
});
