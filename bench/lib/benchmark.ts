/** A benchmark: `npm run bench -- <name> [...args]` runs it (bench/index.ts lists them). */
export interface Benchmark {
  description: string;
  run(args: string[]): Promise<void>;
}
