// Builds <loyalty-panel> into dist/panel/loyalty.js: one minified ES module, no dependencies,
// served by the API process at /storefront/loyalty.js (src/storefront/panel-routes.ts).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new globalThis.URL(path, import.meta.url));

await build({
  entryPoints: [here('./src/loyalty-panel.ts')],
  outfile: here('../dist/panel/loyalty.js'),
  bundle: true,
  format: 'esm',
  minify: true,
  target: 'es2020',
  legalComments: 'none',
  logLevel: 'warning',
});
