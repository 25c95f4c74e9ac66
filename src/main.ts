#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerBackupCommands } from './cli/backup.js';
import { registerConsoleLinkCommand } from './cli/console-link.js';
import { registerConnectionsCommand } from './cli/sample-deliveries.js';
import { CliError } from './cli/context.js';
import { registerDemoCommand } from './cli/demo.js';
import { registerExportCommand } from './cli/export.js';
import { registerImportCommand } from './cli/import.js';
import { registerOpenApiCommand } from './cli/openapi.js';
import { registerServeCommands } from './cli/serve.js';
import { registerShopCommands } from './cli/shops.js';
import { registerStreamCommands } from './cli/stream.js';
import { registerVerifyCommand } from './cli/verify.js';
import { ConfigError } from './config.js';

const program = new Command()
  .name('loyalty')
  .description('Loyalty API: serve it and administer shops, tokens and data.\nConfiguration comes from the environment (DATABASE_URL, PORT, ...).')
  .showHelpAfterError()
  .exitOverride();

registerServeCommands(program);
registerShopCommands(program);
registerImportCommand(program);
registerDemoCommand(program);
registerVerifyCommand(program);
registerStreamCommands(program);
registerOpenApiCommand(program);
registerBackupCommands(program);
registerExportCommand(program);
registerConsoleLinkCommand(program);
registerConnectionsCommand(program);

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
