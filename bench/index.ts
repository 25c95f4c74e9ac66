import { history } from './history.js';
import { ledger } from './ledger.js';
import { lists } from './lists.js';
import { overload } from './overload.js';

export interface Benchmark {
  description: string;
  run(args: string[]): Promise<void>;
}

// Each benchmark registers itself here.
export const benchmarks: Record<string, Benchmark> = { history, ledger, lists, overload };
