import { actions } from './actions.js';
import { history } from './history.js';
import { imports } from './imports.js';
import { ledger } from './ledger.js';
import { lists } from './lists.js';
import { neighbour } from './neighbour.js';
import { orders } from './orders.js';
import { overload } from './overload.js';
import { redemptions } from './redemptions.js';
import { workers } from './workers.js';
import { storefront } from './storefront.js';
import { reports } from './reports.js';
import { scale } from './scale.js';
import { consoleBench } from './console.js';
import { connections } from './connections.js';

import type { Benchmark } from './lib/benchmark.js';

export type { Benchmark };

// Each benchmark registers itself here.
export const benchmarks: Record<string, Benchmark> = {
  actions,
  history,
  import: imports,
  ledger,
  lists,
  neighbour,
  orders,
  overload,
  redemptions,
  workers,
  storefront,
  reports,
  scale,
  console: consoleBench,
  connections,
};
