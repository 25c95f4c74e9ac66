export interface Benchmark {
  description: string;
  run(args: string[]): Promise<void>;
}

// Each benchmark registers itself here.
export const benchmarks: Record<string, Benchmark> = {};
