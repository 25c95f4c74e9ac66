import fs from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { connect } from '../db/connect.js';

// `loyalty openapi [--out FILE]`: the OpenAPI document this build serves at /openapi.json,
// without a database or a port, so that a client's types can be generated from it
// (npm run client:generate).

/** The document as /openapi.json serves it, from an app built the one way (buildApp) on an unused in-memory database. */
export async function openApiDocument(): Promise<unknown> {
  // Loaded here, not at the top, so the other commands start quickly.
  const { buildApp } = await import('../app.js');
  const config = loadConfig(process.env, { databaseUrl: 'sqlite::memory:', bootstrap: false, expirySweepIntervalMs: 0, logLevel: 'warn' });
  const database = connect(config.databaseUrl);
  const app = await buildApp(config, { database });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await database.close();
  }
}

export function registerOpenApiCommand(program: Command): void {
  program
    .command('openapi')
    .description('Print the OpenAPI document the server serves at /openapi.json (PUBLIC_URL names its server, as it does there)')
    .option('--out <file>', 'write it to FILE instead of standard output')
    .action(async (opts: { out?: string }) => {
      const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
      if (opts.out === undefined) process.stdout.write(text);
      else fs.writeFileSync(opts.out, text);
    });
}
