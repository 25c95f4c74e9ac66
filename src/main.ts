#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { CliError } from './cli/context.js';
import { registerServeCommands } from './cli/serve.js';
import { ConfigError } from './config.js';

const program = new Command()
  .name('loyalty')
  .description('Loyalty API: serve it and administer shops, tokens and data.\nConfiguration comes from the environment (DATABASE_URL, PORT, ...).')
  .showHelpAfterError()
  .exitOverride();

registerServeCommands(program);
// `loyalty serve` (the server, and each worker of `serve --workers`) and `loyalty migrate` load
// only their own command's modules: the other commands' cost about half a second of CPU in every
// process that starts, which a loaded machine turns into seconds before a worker listens.
if (process.argv[2] !== 'serve' && process.argv[2] !== 'migrate') {
  const commands = await Promise.all([
    import('./cli/shops.js').then((m) => m.registerShopCommands),
    import('./cli/import.js').then((m) => m.registerImportCommand),
    import('./cli/demo.js').then((m) => m.registerDemoCommand),
    import('./cli/verify.js').then((m) => m.registerVerifyCommand),
    import('./cli/stream.js').then((m) => m.registerStreamCommands),
    import('./cli/openapi.js').then((m) => m.registerOpenApiCommand),
    import('./cli/backup.js').then((m) => m.registerBackupCommands),
    import('./cli/export.js').then((m) => m.registerExportCommand),
    import('./cli/console-link.js').then((m) => m.registerConsoleLinkCommand),
    import('./cli/sample-deliveries.js').then((m) => m.registerConnectionsCommand),
  ]);
  for (const register of commands) register(program);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has already printed its own message (unknown option, missing argument, --help).
  if (error instanceof CommanderError) process.exit(error.exitCode);
  // Bad input or configuration (exit 2), or a failure such as a database that cannot be
  // reached (exit 1): one line a person can act on, no stack trace.
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof CliError || error instanceof ConfigError ? 2 : 1);
}
