// `npm start`'s first step: builds dist/ when TypeScript is installed (a development tree). In a
// production tree (`npm ci --omit=dev`, no TypeScript) it builds nothing: a tree built before the
// prune starts as it is, and one never built gets what to do instead of `tsc: not found`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const root = process.cwd();
const typescript = path.join(root, 'node_modules', 'typescript');
const main = path.join(root, 'dist', 'src', 'main.js');

if (fs.existsSync(typescript)) {
  // npm sets npm_execpath for its scripts: the build runs with the npm that runs this.
  const npm = process.env.npm_execpath;
  const build = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(build.status ?? 1);
}
if (!fs.existsSync(main)) {
  process.stderr.write(
    [
      'npm start: dist/src/main.js is not built, and TypeScript is not installed here (npm ci --omit=dev leaves it out).',
      'Build before pruning the development dependencies:',
      '',
      '  npm ci && npm run build && npm prune --omit=dev',
      '  node dist/src/main.js serve',
      '',
      'or run `npm install && npm start` for a development tree. See docs/operations.md.',
      '',
    ].join('\n'),
  );
  process.exit(1);
}
