#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { CliError } from './cli/context.js';
import { registerServeCommands } from './cli/serve.js';
import { registerShopCommands } from './cli/shops.js';
import { ConfigError } from './config.js';

const program = new Command()
  .name('loyalty')
  .description('Loyalty API: serve it and administer shops, tokens and data.\nConfiguration comes from the environment (DATABASE_URL, PORT, ...).')
  .showHelpAfterError()
  .exitOverride();

registerServeCommands(program);
registerShopCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof CliError || error instanceof ConfigError) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
