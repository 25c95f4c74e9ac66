// `npm run bench -- <name> [...]`: runs bench/<name>.ts. With no name, lists them.
import { benchmarks } from './index.js';

const [name, ...args] = process.argv.slice(2);
const bench = name ? benchmarks[name] : undefined;
if (!bench) {
  process.stdout.write(
    `usage: npm run bench -- <name>\n\nbenchmarks:\n${Object.entries(benchmarks)
      .map(([n, b]) => `  ${n.padEnd(10)} ${b.description}`)
      .join('\n')}\n`,
  );
  process.exit(name ? 2 : 0);
}
await bench.run(args);
