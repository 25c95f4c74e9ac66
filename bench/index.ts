import { history } from './history.js';
import { ledger } from './ledger.js';
import { lists } from './lists.js';
import { orders } from './orders.js';
import { overload } from './overload.js';
import { redemptions } from './redemptions.js';
import { reports } from './reports.js';

export interface Benchmark {
  description: string;
  run(args: string[]): Promise<void>;
}

// Each benchmark registers itself here.
export const benchmarks: Record<string, Benchmark> = { history, ledger, lists, orders, overload, redemptions, reports };
