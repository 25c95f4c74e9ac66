/** A benchmark: `npm run bench -- <name> [...args]` runs it (bench/index.ts lists them). */
export interface Benchmark {
  description: string;
  run(args: string[]): Promise<void>;
}

export type BenchDialect = 'sqlite' | 'postgres';

/** Runs `run` for each database the arguments name (both when none), refusing any other name. */
export async function eachDialect(args: string[], run: (dialect: BenchDialect) => Promise<void>): Promise<void> {
  const wanted = args.length > 0 ? args : ['sqlite', 'postgres'];
  for (const dialect of wanted) {
    if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`unknown database "${dialect}": use sqlite or postgres`);
    await run(dialect);
  }
}
