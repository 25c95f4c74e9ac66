import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVE_NODE_ARGS } from '../../bench/lib/server.js';

// The benchmarks and the tests that start a real server run it as `npm start` does: with the
// same flags for Node (the heap limit that keeps the process under 300 MB when overloaded).

const ROOT = new URL('../../', import.meta.url);
const PRESTART = new URL('scripts/prestart.js', ROOT).pathname;

/** `npm start`'s prestart step in a tree laid out as `files` say (paths relative to it). */
function prestartIn(files: string[]): Promise<{ code: number; stderr: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-prestart-'));
  for (const file of files) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), '');
  }
  return new Promise((resolve) => {
    execFile(process.execPath, [PRESTART], { cwd: dir }, (error, _stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code: error ? Number(error.code) : 0, stderr });
    });
  });
}

describe('npm start', () => {
  it('runs loyalty serve with the Node flags the benchmarks measure', () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`node ${SERVE_NODE_ARGS.join(' ')} dist/src/main.js serve`);
    expect(pkg.scripts.prestart).toBe('node scripts/prestart.js');
  });

  it('says how to build, instead of failing with tsc: not found, in a production tree never built', async () => {
    const { code, stderr } = await prestartIn(['package.json']);
    expect(code).toBe(1);
    expect(stderr).toContain('TypeScript is not installed');
    expect(stderr).toContain('npm ci && npm run build && npm prune --omit=dev');
    expect(stderr).toContain('node dist/src/main.js serve');
  });

  it('starts a production tree built before the prune as it is', async () => {
    expect(await prestartIn(['package.json', 'dist/src/main.js'])).toEqual({ code: 0, stderr: '' });
  });
});
