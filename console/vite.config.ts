import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Built into the server's dist/, which serves it at /console (src/console/routes.ts). The typed
// client is taken from its source, so the console's build needs no build of the client first.
export default defineConfig({
  base: '/console/',
  resolve: {
    alias: { '@loyalty-api/client': fileURLToPath(new URL('../client/src/index.ts', import.meta.url)) },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    rolldownOptions: {
      // React Query marks its modules "use client" for server-component bundlers; a browser bundle has no such boundary.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
